// SPDX-License-Identifier: Apache-2.0
// Fleet correlation (issue 16): address resolution, peer attribution with
// distinct reporters, incidents per job with hardware attribution.
#include <doctest/doctest.h>

#include "base/node_identity.h"
#include "tainter/correlation/correlator.h"

namespace faultline {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::system_clock::time_point;

const TimePoint kT0 = std::chrono::system_clock::from_time_t(1'800'000'000);

FaultEvent Completion(const std::string& reporter, const std::string& peer, TimePoint at,
                      int n = 0) {
  FaultEvent e;
  e.id = reporter + "-" + peer + "-" + std::to_string(n);
  e.node = reporter;
  e.rule = "nccl.ib-completion-error";
  e.pack = "nccl";
  e.category = "network";
  e.severity = Severity::kError;
  e.action = Action::kTaint;
  e.origin = Origin::kPod;
  e.source = "podlog";
  e.message = "NET/IB : Got completion from peer " + peer + "<33941> with status=12";
  e.peer = peer;
  e.expire = 24h;
  e.log_time = at;
  e.labels = {{"namespace", "ml"}, {"pod", "train-llm-worker-" + reporter}};
  return e;
}

FaultEvent Watchdog(const std::string& node, const std::string& ns, const std::string& pod,
                    TimePoint at) {
  FaultEvent e;
  e.id = node + "-wd-" + pod;
  e.node = node;
  e.rule = "nccl.watchdog-timeout";
  e.category = "application";
  e.severity = Severity::kError;
  e.action = Action::kEvent;
  e.origin = Origin::kPod;
  e.log_time = at;
  e.labels = {{"namespace", ns}, {"pod", pod}};
  return e;
}

FaultEvent PortDown(const std::string& node, TimePoint at) {
  FaultEvent e;
  e.id = node + "-port-down";
  e.node = node;
  e.rule = "ib.port-down";
  e.category = "network";
  e.severity = Severity::kError;
  e.action = Action::kTaint;
  e.origin = Origin::kIbCounters;
  e.summary = "IB port mlx5_3/1 went down";
  e.log_time = at;
  return e;
}

TEST_CASE("addresses resolve in any spelling: IPv4-mapped GID, port suffix, zone, case") {
  CHECK(CanonicalAddress("::ffff:10.0.4.12") == "10.0.4.12");
  CHECK(CanonicalAddress("10.0.4.12<33941>") == "10.0.4.12");
  CHECK(CanonicalAddress("10.0.4.12:33941") == "10.0.4.12");
  CHECK(CanonicalAddress("fe80:0000:0000:0000:0002:c903:0031:7c41") == "fe80::2:c903:31:7c41");
  CHECK(CanonicalAddress("[FE80::1%ib0]:4791") == "fe80::1");
  CHECK(CanonicalAddress("GPU-17") == "gpu-17");
  AddressBook book;
  book.Set(AddressBook::Witness::kNodeStatus, "gpu-17", {"10.0.0.17"});
  book.Set(AddressBook::Witness::kIdentity, "gpu-17",
           {"10.0.4.17", "fe80:0000:0000:0000:0002:c903:0031:7c41"});
  CHECK(book.Resolve("10.0.0.17") == "gpu-17");
  CHECK(book.Resolve("::ffff:10.0.4.17") == "gpu-17");
  CHECK(book.Resolve("fe80::2:c903:31:7c41") == "gpu-17");
  CHECK(book.Resolve("gpu-17") == "gpu-17");
  CHECK_FALSE(book.Resolve("10.9.9.9"));
  // A newer identity replaces the older: the address it dropped is gone,
  // the one the Node status still claims stays.
  book.Set(AddressBook::Witness::kIdentity, "gpu-17", {"10.0.0.17"});
  CHECK_FALSE(book.Resolve("10.0.4.17"));
  book.Set(AddressBook::Witness::kIdentity, "gpu-17", {});
  CHECK(book.Resolve("10.0.0.17") == "gpu-17");
  // A re-used address belongs to its newest claimant.
  book.Set(AddressBook::Witness::kNodeStatus, "gpu-18", {"10.0.0.17"});
  CHECK(book.Resolve("10.0.0.17") == "gpu-18");
  book.Forget("gpu-18");
  CHECK_FALSE(book.Resolve("10.0.0.17"));
}

TEST_CASE("identity JSON round-trips and bad input is a clear error") {
  NodeIdentity id{"gpu-17", "gpu-17.example", "b00t", {"10.0.4.17"}, {"fe80::1"}, kT0};
  auto back = ParseNodeIdentity(SerializeNodeIdentity(id));
  REQUIRE(back);
  CHECK(back->node == "gpu-17");
  CHECK(back->gids == std::vector<std::string>{"fe80::1"});
  CHECK(back->published == kT0);
  CHECK(ParseNodeIdentity("{").error().message() == "identity is not a JSON object");
  CHECK(ParseNodeIdentity(R"({"node":""})").error().message() ==
        "identity key 'node' is missing or empty");
  CHECK(ParseNodeIdentity(R"({"node":"a","gids":[1]})").error().message() ==
        "identity key 'gids' must be a list of strings");
  CHECK(ParseNodeIdentity(R"({"schema":2,"node":"a"})").error().code() ==
        StatusCode::kFailedPrecondition);
}

TEST_CASE("63 peers naming node 17 by IP or GID blame node 17 only, once per doubling") {
  Correlator c({});
  for (int i = 0; i < 64; ++i) {
    const std::string n = "gpu-" + std::to_string(i);
    c.addresses().Set(AddressBook::Witness::kNodeStatus, n, {"10.0.0." + std::to_string(i)});
    c.ObserveIdentity({n,
                       n,
                       "b",
                       {"10.0.4." + std::to_string(i)},
                       {"fe80::2:c903:31:" + std::to_string(1000 + i)},
                       kT0});
  }
  std::vector<FaultEvent> blames;
  for (int i = 0; i < 64; ++i) {
    if (i == 17) continue;
    const std::string peer = i % 2 ? "10.0.4.17" : "fe80:0000:0000:0000:0002:c903:0031:1017";
    FaultEvent e = Completion("gpu-" + std::to_string(i), peer, kT0 + std::chrono::seconds(i));
    CHECK(c.Accused(e) == "gpu-17");
    c.Observe(e);
    c.Observe(e);  // a repeat of one reporter counts once
    for (FaultEvent& b : c.TakeBlames(kT0 + 70s)) blames.push_back(std::move(b));
  }
  for (FaultEvent& b : c.TakeBlames(kT0 + 200s)) blames.push_back(std::move(b));
  REQUIRE(!blames.empty());
  for (const FaultEvent& b : blames) {
    CHECK(b.node == "gpu-17");
    CHECK(b.rule == "nccl.ib-completion-error.by-peers");
    CHECK(b.action == Action::kTaint);
  }
  // Due at 2, then at each doubling (4, 8, 16, 32) and the refresh (63).
  CHECK(blames.size() == 6);
  CHECK(blames.front().summary.rfind("blamed by 2 peers for nccl.ib-completion-error", 0) == 0);
  CHECK(blames.back().summary.rfind("blamed by 63 peers", 0) == 0);
  CHECK(blames.back().fields.at("reporters") == "63");
  CHECK(blames.back().expire == 24h);
  CHECK(blames.back().message.find("gpu-0: NET/IB") == 0);
  // The same accusation rebuilt gets the same ids (a restart dedupes).
  CHECK(blames.back().id != blames.front().id);
}

// Issue 16.3: a replica that does not own the accused node must not use up
// the accusation: when it gains the node (a rebalance, or its partitions
// arrive after the history was read) it still acts on it.
TEST_CASE("an accusation of a node this replica does not own stays due until it owns it") {
  Correlator c({});
  for (int i = 0; i < 4; ++i) {
    const std::string n = "gpu-" + std::to_string(i);
    c.addresses().Set(AddressBook::Witness::kNodeStatus, n, {"10.0.0." + std::to_string(i)});
  }
  for (int i = 1; i < 4; ++i) c.Observe(Completion("gpu-" + std::to_string(i), "10.0.0.0", kT0));
  bool own = false;
  auto owns = [&own](const std::string&) { return own; };
  CHECK(c.TakeBlames(kT0 + 1s, owns).empty());
  CHECK(c.TakeBlames(kT0 + 2s, owns).empty());
  own = true;
  auto blames = c.TakeBlames(kT0 + 3s, owns);
  REQUIRE(blames.size() == 1);
  CHECK(blames[0].node == "gpu-0");
  CHECK(blames[0].summary.rfind("blamed by 3 peers", 0) == 0);
  CHECK(c.TakeBlames(kT0 + 4s, owns).empty());  // taken
}

TEST_CASE("one reporter, an unknown address or a node naming itself blames nobody") {
  Correlator c({});
  c.addresses().Set(AddressBook::Witness::kNodeStatus, "gpu-1", {"10.0.0.1"});
  c.addresses().Set(AddressBook::Witness::kNodeStatus, "gpu-2", {"10.0.0.2"});
  c.Observe(Completion("gpu-2", "10.0.0.1", kT0, 1));
  c.Observe(Completion("gpu-2", "10.0.0.1", kT0, 2));
  FaultEvent unknown = Completion("gpu-3", "10.9.9.9", kT0);
  CHECK_FALSE(c.Accused(unknown));
  c.Observe(unknown);
  FaultEvent self = Completion("gpu-1", "10.0.0.1", kT0);
  CHECK_FALSE(c.Accused(self));
  c.Observe(self);
  CHECK(c.TakeBlames(kT0 + 1s).empty());
  CHECK(c.unresolved() == 2);
  // Reports older than the window do not add up with new ones.
  c.Observe(Completion("gpu-3", "10.0.0.1", kT0 + 11min));
  CHECK(c.TakeBlames(kT0 + 11min).empty());
}

TEST_CASE("a 64-node watchdog storm without hardware evidence is one unattributed incident") {
  IncidentTracker t({});
  for (int i = 0; i < 64; ++i) {
    t.Observe(Watchdog("gpu-" + std::to_string(i), "ml", "train-llm-worker-" + std::to_string(i),
                       kT0 + std::chrono::seconds(i % 5)),
              kT0 + std::chrono::seconds(i % 5));
  }
  CHECK(t.Close(kT0 + 60s).empty());  // still open: lines within the window
  auto closed = t.Close(kT0 + 5min);
  REQUIRE(closed.size() == 1);
  CHECK(closed[0].job == "ml/train-llm");
  CHECK(closed[0].nodes.size() == 64);
  CHECK(closed[0].attributed.empty());
  CHECK(FormatIncident(closed[0]).find("attributed: none") != std::string::npos);
}

TEST_CASE("two jobs failing at once on disjoint nodes are two incidents, attributed separately") {
  IncidentTracker t({});
  t.Observe(PortDown("gpu-3", kT0 - 30s), kT0 - 30s);
  FaultEvent xid = PortDown("gpu-40", kT0 - 5min);
  xid.rule = "nvidia.xid";
  xid.origin = Origin::kKernel;
  xid.severity = Severity::kCritical;
  xid.category = "hardware";
  t.Observe(xid, xid.log_time);
  t.Observe(PortDown("gpu-50", kT0 - 20min), kT0 - 20min);  // before the lookback
  for (int i = 0; i < 32; ++i) {
    t.Observe(Watchdog("gpu-" + std::to_string(i), "ml", "a-worker-" + std::to_string(i), kT0),
              kT0);
    t.Observe(Watchdog("gpu-" + std::to_string(32 + i), "ml", "b-" + std::to_string(i) + "-x7k2p",
                       kT0 + 1s),
              kT0 + 1s);
  }
  auto closed = t.Close(kT0 + 10min);
  REQUIRE(closed.size() == 2);
  CHECK(closed[0].job == "ml/a");
  CHECK(closed[0].attributed == "gpu-3");
  CHECK(closed[1].job == "ml/b");
  CHECK(closed[1].attributed == "gpu-40");
  CHECK(closed[1].evidence.size() == 1);
}

TEST_CASE("job names: ordinal, random suffix and role are not the job") {
  CHECK(IncidentTracker::JobOf("ml", "train-llm-worker-17") == "ml/train-llm");
  CHECK(IncidentTracker::JobOf("ml", "train-llm-master-0") == "ml/train-llm");
  CHECK(IncidentTracker::JobOf("ml", "sweep-7-0-abc12") == "ml/sweep");
  CHECK(IncidentTracker::JobOf("ml", "bert") == "ml/bert");
  CHECK(IncidentTracker::JobOf("", "bert").empty());
}

TEST_CASE("a gap longer than the window starts a new incident of the same job") {
  IncidentTracker t({});
  for (int i = 0; i < 3; ++i) {
    t.Observe(Watchdog("gpu-" + std::to_string(i), "ml", "j-" + std::to_string(i), kT0), kT0);
  }
  for (int i = 0; i < 3; ++i) {
    t.Observe(Watchdog("gpu-" + std::to_string(i), "ml", "j-" + std::to_string(i), kT0 + 10min),
              kT0 + 10min);
  }
  CHECK(t.Close(kT0 + 20min).size() == 2);
}

}  // namespace
}  // namespace faultline
