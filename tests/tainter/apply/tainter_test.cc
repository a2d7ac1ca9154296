// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "tainter/apply/node_applier.h"
#include "tainter/daemon/node_reports.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_node_api.h"
#include "tests/fakes/sample_event.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr char kKey[] = "faultline.dev/faulty";
constexpr char kAnnotation[] = "faultline.dev/reasons";

int next_id = 0;

struct Fixture {
  explicit Fixture(int nodes = 10, Tainter::Options options = {}) {
    for (int i = 0; i < nodes; ++i) api.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
    opts = std::move(options);
    tainter = Make();
  }
  std::unique_ptr<Tainter> Make() {
    Result<std::unique_ptr<Tainter>> t =
        Tainter::Create(opts, ApplierApis{api, api}, metrics, clock);
    REQUIRE(t.ok());
    REQUIRE((*t)->AdoptAll().ok());
    return std::move(*t);
  }
  FaultEvent Ev(const std::string& node, const std::string& rule = "nvidia.xid",
                Action action = Action::kTaint) {
    FaultEvent e = SampleEvent(node, "ev-" + std::to_string(++next_id), clock.Now());
    e.rule = rule;
    e.action = action;
    return e;
  }
  std::vector<Reason> Reasons(const std::string& node) {
    auto n = api.Node(node);
    REQUIRE(n.has_value());
    auto it = n->annotations.find(kAnnotation);
    if (it == n->annotations.end()) return {};
    Result<std::vector<Reason>> r = DecodeReasons(it->second);
    REQUIRE(r.ok());
    return *r;
  }
  std::uint64_t Counter(const std::string& name, const MetricLabels& labels = {}) {
    return metrics.CounterValue(name, labels);
  }

  FakeClock clock;
  FakeNodeApi api;
  MetricsRegistry metrics;
  Tainter::Options opts;
  std::unique_ptr<Tainter> tainter;
};

TEST_CASE("a taint decision adds the taint, the reasons annotation and a Warning Event") {
  Fixture f;
  bool done = false;
  f.tainter->Handle(f.Ev("gpu-3"), [&] { done = true; });
  CHECK(done);
  CHECK(f.api.HasTaint("gpu-3", kKey, "NoSchedule"));
  std::vector<Reason> reasons = f.Reasons("gpu-3");
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].rule == "nvidia.xid");
  CHECK(reasons[0].message == "NVRM: Xid (PCI:0000:3b:00): 79, pid=0");
  std::vector<NodeEvent> events = f.api.EventsFor("gpu-3");
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == "Warning");
  CHECK(events[0].reason == "FaultlineTainted");
  CHECK(events[0].node_uid == "uid-gpu-3");
  CHECK(events[0].message ==
        "nvidia.xid: Xid 79: GPU has fallen off the bus: NVRM: Xid (PCI:0000:3b:00): 79, pid=0");
  CHECK(f.Counter("faultline_tainter_taints_added_total") == 1);
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "taint"}}) == 1);
}

TEST_CASE("the taint key, value and effect are settings (Konduktor's key as a drop-in)") {
  Tainter::Options o;
  o.taint = {"trainy.konduktor.ai/faulty", "true", "NoSchedule", ""};
  Fixture f(10, o);
  f.tainter->Handle(f.Ev("gpu-1"));
  CHECK(f.api.HasTaint("gpu-1", "trainy.konduktor.ai/faulty", "NoSchedule"));
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
}

TEST_CASE("a duplicate event is decided once: one write, one Event") {
  Fixture f;
  FaultEvent e = f.Ev("gpu-1");
  int done = 0;
  f.tainter->Handle(e, [&] { ++done; });
  f.tainter->Handle(e, [&] { ++done; });
  CHECK(done == 2);  // the duplicate is deliberately dropped, so it may be committed
  CHECK(f.api.writes() == 1);
  CHECK(f.api.events().size() == 1);
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "duplicate"}}) == 1);
}

TEST_CASE("a restarted tainter adopts taints: no lift, no second taint") {
  Fixture f;
  FaultEvent e = f.Ev("gpu-1", "nccl.timeout");
  e.expire = hours(1);
  f.tainter->Handle(e);
  REQUIRE(f.api.HasTaint("gpu-1", kKey));
  const int writes = f.api.writes();
  f.tainter.reset();  // "restart"
  f.clock.Advance(minutes(10));
  f.tainter = f.Make();
  f.tainter->Tick();
  CHECK(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.api.writes() == writes);
  CHECK(f.tainter->policy().IsTainted("gpu-1"));
  FaultEvent repeat = f.Ev("gpu-1", "nccl.timeout");
  repeat.expire = hours(1);
  f.tainter->Handle(repeat);
  CHECK(f.api.writes() == writes);  // repeat within persist interval: no write
  CHECK(f.api.EventsFor("gpu-1").size() == 1);
  SUBCASE("the adopted reason's expiry, extended by the repeat, still lifts the taint") {
    f.clock.Advance(minutes(59));
    f.tainter->Tick();
    CHECK(f.api.HasTaint("gpu-1", kKey));
    f.clock.Advance(minutes(1));
    f.tainter->Tick();
    CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
  }
}

TEST_CASE("our taint without annotation is adopted and kept, the valve counts it") {
  Tainter::Options o;
  o.policy.max_fraction = 0.1;
  Fixture f(10, o);
  f.api.MutateNode("gpu-5", [](NodeInfo& n) {
    n.taints.push_back({kKey, "true", "NoSchedule", ""});
  });
  REQUIRE(f.tainter->AdoptAll().ok());
  CHECK(f.tainter->policy().IsTainted("gpu-5"));
  f.clock.Advance(hours(24 * 100));
  f.tainter->Tick();
  CHECK(f.api.HasTaint("gpu-5", kKey));
  f.tainter->Handle(f.Ev("gpu-6"));
  CHECK_FALSE(f.api.HasTaint("gpu-6", kKey));  // 1 of 10 already tainted
}

TEST_CASE("expiry lifts only faultline's taint, foreign taints and annotations stay") {
  Fixture f;
  f.api.MutateNode("gpu-1", [](NodeInfo& n) {
    n.taints.push_back({"node.kubernetes.io/not-ready", "", "NoSchedule", ""});
    n.annotations["other/annotation"] = "keep";
  });
  FaultEvent e = f.Ev("gpu-1", "nccl.timeout");
  e.expire = minutes(30);
  f.tainter->Handle(e);
  REQUIRE(f.api.HasTaint("gpu-1", kKey));
  // Another controller adds a taint while ours is on.
  f.api.MutateNode("gpu-1", [](NodeInfo& n) {
    n.taints.push_back({"example.com/maint", "x", "NoExecute", ""});
  });
  f.clock.Advance(minutes(29));
  f.tainter->Tick();
  CHECK(f.api.HasTaint("gpu-1", kKey));
  f.clock.Advance(minutes(1));
  f.tainter->Tick();
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.api.HasTaint("gpu-1", "node.kubernetes.io/not-ready"));
  CHECK(f.api.HasTaint("gpu-1", "example.com/maint"));
  auto node = f.api.Node("gpu-1");
  CHECK(node->annotations.count(kAnnotation) == 0);
  CHECK(node->annotations.at("other/annotation") == "keep");
  std::vector<NodeEvent> events = f.api.EventsFor("gpu-1");
  REQUIRE(events.size() == 3);  // tainted, untainted, and the reason's recovery
  CHECK(events[1].type == "Normal");
  CHECK(events[1].reason == "FaultlineUntainted");
  CHECK(events[2].type == "Normal");
  CHECK(events[2].reason == "FaultlineRecovered");
  CHECK(f.Counter("faultline_tainter_taints_lifted_total", {{"why", "expired"}}) == 1);
}

TEST_CASE("a lift defers to a reason another replica extended on the node") {
  Fixture f;
  FaultEvent e = f.Ev("gpu-1", "nccl.timeout");
  e.expire = minutes(30);
  f.tainter->Handle(e);
  Reason extended = f.Reasons("gpu-1")[0];
  extended.expires_at = f.clock.Now() + hours(2);
  f.api.MutateNode("gpu-1",
                   [&](NodeInfo& n) { n.annotations[kAnnotation] = EncodeReasons({extended}); });
  f.clock.Advance(minutes(31));
  f.tainter->Tick();
  CHECK(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.tainter->policy().IsTainted("gpu-1"));
  f.clock.Advance(hours(2));
  f.tainter->Tick();
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
}

TEST_CASE("the valve refuses past the limit with an Event, while untaint still works") {
  Fixture f(20);  // 10% of 20 = 2
  f.tainter->Handle(f.Ev("gpu-1"));
  f.tainter->Handle(f.Ev("gpu-2"));
  f.tainter->Handle(f.Ev("gpu-3"));
  CHECK(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.api.HasTaint("gpu-2", kKey));
  CHECK_FALSE(f.api.HasTaint("gpu-3", kKey));
  std::vector<NodeEvent> events = f.api.EventsFor("gpu-3");
  REQUIRE(events.size() == 1);
  CHECK(events[0].reason == "FaultlineValveShut");
  CHECK(events[0].message.find("max_fraction") != std::string::npos);
  CHECK(f.Counter("faultline_tainter_taints_refused_total", {{"rule", "nvidia.xid"}}) == 1);

  REQUIRE(f.tainter->Untaint("gpu-1", "GPU replaced").ok());
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.api.Node("gpu-1")->annotations.count(kAnnotation) == 0);
  NodeEvent last = f.api.EventsFor("gpu-1").back();
  CHECK(last.type == "Normal");
  CHECK(last.message == "faultline's taint lifted by hand: GPU replaced");
  f.tainter->Handle(f.Ev("gpu-3"));
  CHECK(f.api.HasTaint("gpu-3", kKey));
  CHECK(f.tainter->Untaint("gpu-9", "").code() == StatusCode::kFailedPrecondition);
  CHECK(f.tainter->Untaint("nope", "").code() == StatusCode::kNotFound);
}

// Issue 11.3: a refused taint was committed and forgotten, so a real fault
// stayed untainted after capacity returned. It is parked, its offset held
// (done not called), and decided again once a taint is lifted.
TEST_CASE("a refused taint waits, uncommitted, and is applied once another node is lifted") {
  Fixture f(20);  // 10% of 20 = 2
  FaultEvent soft = f.Ev("gpu-1", "nccl.timeout");
  soft.expire = minutes(30);
  f.tainter->Handle(soft);
  f.tainter->Handle(f.Ev("gpu-2"));
  bool done = false;
  f.tainter->Handle(f.Ev("gpu-3"), [&] { done = true; });
  REQUIRE_FALSE(f.api.HasTaint("gpu-3", kKey));
  CHECK_FALSE(done);
  CHECK(f.tainter->parked() == 1);
  f.tainter->Tick();  // no capacity yet
  CHECK_FALSE(f.api.HasTaint("gpu-3", kKey));
  f.clock.Advance(minutes(31));
  f.tainter->Tick();  // gpu-1's reason lapses: the slot goes to gpu-3
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.api.HasTaint("gpu-3", kKey));
  CHECK(done);
  CHECK(f.tainter->parked() == 0);
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "taint"}}) == 3);
}

// Each refused taint is counted once in taints_refused_total, however often
// its parked fault is decided again: a parked fault is retried at every tick
// while the fleet has room, and the new-taint rate (max_new_taints per
// new_taint_window) refuses it again until the window moves. A dashboard of
// refusals must not grow with the ticks while nothing new was refused (the
// 10,000-node storm counted 4,050 for 3,995 refused nodes).
TEST_CASE("a parked fault refused again at each tick is counted once") {
  Fixture f(100);  // room for 10 taints; max_new_taints 5 per 10 minutes
  for (int i = 1; i <= 5; ++i) f.tainter->Handle(f.Ev("gpu-" + std::to_string(i)));
  bool done = false;
  f.tainter->Handle(f.Ev("gpu-6"), [&] { done = true; });
  REQUIRE_FALSE(f.api.HasTaint("gpu-6", kKey));
  REQUIRE(f.tainter->parked() == 1);
  CHECK(f.Counter("faultline_tainter_taints_refused_total", {{"rule", "nvidia.xid"}}) == 1);
  for (int tick = 0; tick < 5; ++tick) {
    f.clock.Advance(seconds(1));
    f.tainter->Tick();  // decided again, and refused again by the rate
  }
  CHECK_FALSE(f.api.HasTaint("gpu-6", kKey));
  CHECK(f.tainter->parked() == 1);
  CHECK(f.Counter("faultline_tainter_taints_refused_total", {{"rule", "nvidia.xid"}}) == 1);
  f.clock.Advance(minutes(11));
  f.tainter->Tick();  // the window moved on: its taint now
  CHECK(f.api.HasTaint("gpu-6", kKey));
  CHECK(done);
  CHECK(f.Counter("faultline_tainter_taints_refused_total", {{"rule", "nvidia.xid"}}) == 1);
}

TEST_CASE("a new fault after the taint was lifted by hand behind our back puts it back") {
  Fixture f;
  f.tainter->Handle(f.Ev("gpu-2"), [] {});
  REQUIRE(f.api.HasTaint("gpu-2", kKey, "NoSchedule"));
  // An operator removes the taint directly (kubectl taint ... -), before
  // the tainter's next resync notices.
  f.api.MutateNode("gpu-2", [](NodeInfo& n) { n.taints.clear(); });
  f.tainter->Handle(f.Ev("gpu-2", "nvidia.fallen-off-bus"), [] {});
  CHECK(f.api.HasTaint("gpu-2", kKey, "NoSchedule"));
  // The tainter re-reads the node before writing: the lifted taint took its
  // old reasons with it (issue 11.1), so the new fault is a new taint with
  // only its own reason, and the valve was asked.
  std::vector<Reason> reasons = f.Reasons("gpu-2");
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0].rule == "nvidia.fallen-off-bus");
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "taint"}}) == 2);
}

TEST_CASE("untaint removes only faultline's taint") {
  Fixture f;
  f.tainter->Handle(f.Ev("gpu-1"));
  f.api.MutateNode("gpu-1", [](NodeInfo& n) {
    n.taints.push_back({"other", "v", "NoSchedule", ""});
  });
  REQUIRE(f.tainter->Untaint("gpu-1", "").ok());
  CHECK(f.api.HasTaint("gpu-1", "other"));
  CHECK_FALSE(f.api.HasTaint("gpu-1", kKey));
}

TEST_CASE("an unavailable API server is retried with backoff, done waits for the write") {
  Fixture f;
  f.api.FailNext(UnavailableError("503"), FakeNodeApi::Op::kUpdate);
  f.api.FailNext(UnavailableError("503"), FakeNodeApi::Op::kUpdate);
  bool done = false;
  bool later_done = false;
  f.tainter->Handle(f.Ev("gpu-1"), [&] { done = true; });
  CHECK_FALSE(done);
  CHECK(f.tainter->pending() == 1);
  // A later event for the same node waits behind the first.
  f.tainter->Handle(f.Ev("gpu-1", "other.rule"), [&] { later_done = true; });
  CHECK_FALSE(later_done);
  f.tainter->Tick();  // backoff not over yet
  CHECK_FALSE(done);
  f.clock.Advance(milliseconds(500));
  f.tainter->Tick();  // second failure
  CHECK_FALSE(done);
  f.clock.Advance(milliseconds(999));
  f.tainter->Tick();
  CHECK_FALSE(done);  // backoff doubled to 1 s
  f.clock.Advance(milliseconds(1));
  f.tainter->Tick();
  CHECK(done);
  CHECK(later_done);
  CHECK(f.tainter->pending() == 0);
  CHECK(f.api.HasTaint("gpu-1", kKey));
  CHECK(f.Reasons("gpu-1").size() == 2);
  CHECK(f.Counter("faultline_tainter_api_errors_total",
                  {{"op", "update"}, {"code", "unavailable"}}) == 2);
}

TEST_CASE("a node that is gone is forgotten and its event dropped") {
  Fixture f;
  bool done = false;
  f.tainter->Handle(f.Ev("ghost"), [&] { done = true; });
  CHECK(done);
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "unknown_node"}}) == 1);
  f.api.RemoveNode("gpu-2");
  done = false;
  f.tainter->Handle(f.Ev("gpu-2"), [&] { done = true; });
  CHECK(done);
  CHECK_FALSE(f.tainter->policy().Knows("gpu-2"));
}

TEST_CASE("a node first seen in an event is read and adopted") {
  Fixture f;
  f.api.AddNode("late-node", {{"gpu", "true"}});
  f.api.MutateNode("late-node", [](NodeInfo& n) {
    n.taints.push_back({kKey, "true", "NoSchedule", ""});
  });
  f.tainter->Handle(f.Ev("late-node"));
  const int writes = f.api.writes();
  CHECK(f.tainter->policy().IsTainted("late-node"));
  CHECK(f.api.writes() == writes);
}

TEST_CASE("nodes outside the selector and opted-out nodes are never tainted") {
  Tainter::Options o;
  o.node_selector = "gpu=true";
  Fixture f(10, o);
  f.api.AddNode("cpu-1", {{"gpu", "false"}});
  f.api.AddNode("gpu-opt", {{"gpu", "true"}, {"faultline.dev/opt-out", "true"}});
  f.tainter->Handle(f.Ev("cpu-1"));
  f.tainter->Handle(f.Ev("gpu-opt"));
  CHECK_FALSE(f.api.HasTaint("cpu-1", kKey));
  CHECK_FALSE(f.api.HasTaint("gpu-opt", kKey));
  CHECK(f.api.EventsFor("cpu-1").empty());
  REQUIRE(f.api.EventsFor("gpu-opt").size() == 1);
  CHECK(f.api.EventsFor("gpu-opt")[0].message.find("opted out") != std::string::npos);
  CHECK(f.Counter("faultline_tainter_decisions_total", {{"outcome", "unmanaged"}}) == 1);
}

TEST_CASE("dry run sends no write and counts every write it would send") {
  Tainter::Options o;
  o.dry_run = true;
  Fixture f(10, o);
  f.tainter->Handle(f.Ev("gpu-1"));
  CHECK(f.api.writes() == 0);
  CHECK(f.api.calls(FakeNodeApi::Op::kUpdate) == 0);
  CHECK(f.api.events().empty());
  CHECK(f.Counter("faultline_tainter_dry_run_writes_total", {{"op", "update"}}) == 1);
  CHECK(f.Counter("faultline_tainter_dry_run_writes_total", {{"op", "event"}}) == 1);
}

TEST_CASE("nodes lists faultline's tainted nodes with since and reasons") {
  Fixture f;
  f.tainter->Handle(f.Ev("gpu-1"));
  f.clock.Advance(minutes(5));
  f.tainter->Handle(f.Ev("gpu-1", "ib.down"));
  f.api.MutateNode("gpu-7", [](NodeInfo& n) {
    n.taints.push_back({kKey, "true", "NoSchedule", ""});
  });
  Result<std::vector<TaintedNodeReport>> r =
      ListTainted(f.api, {f.opts.taint, f.opts.annotation_key});
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].node == "gpu-1");
  CHECK((*r)[0].reasons.size() == 2);
  CHECK((*r)[0].since == f.clock.Now() - minutes(5));
  CHECK((*r)[1].node == "gpu-7");
  CHECK((*r)[1].reasons[0].rule == "adopted");
}

TEST_CASE("a full retry queue sheds the oldest work and says it is done") {
  Tainter::Options o;
  o.max_pending = 2;
  Fixture f(10, o);
  for (int i = 0; i < 3; ++i) f.api.FailNext(UnavailableError("down"), FakeNodeApi::Op::kUpdate);
  int done = 0;
  f.tainter->Handle(f.Ev("gpu-1"), [&] { ++done; });
  f.tainter->Handle(f.Ev("gpu-1", "b"), [&] { ++done; });
  CHECK(done == 0);
  f.tainter->Handle(f.Ev("gpu-1", "c"), [&] { ++done; });
  CHECK(done == 1);
  CHECK(f.tainter->pending() == 2);
  CHECK(f.Counter("faultline_tainter_dropped_work_total") == 1);
}

}  // namespace
}  // namespace faultline
