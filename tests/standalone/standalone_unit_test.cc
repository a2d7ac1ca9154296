// SPDX-License-Identifier: Apache-2.0
// The standalone agent's parts in process: the own-node restriction, the
// dry-run NodeApi and the sink that hands events to the Tainter.
#include <sstream>

#include <doctest/doctest.h>

#include "base/metrics.h"
#include "collector/agent/agent_config.h"
#include "collector/standalone/own_node_api.h"
#include "collector/standalone/standalone_config.h"
#include "collector/standalone/standalone_sink.h"
#include "tainter/apply/dry_run_node_api.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_node_api.h"

namespace faultline {
namespace {

using Op = FakeNodeApi::Op;

FaultEvent Ev(const std::string& node, const std::string& id, Action action = Action::kTaint,
              const std::string& rule = "nvidia.xid") {
  FaultEvent e;
  e.id = id;
  e.node = node;
  e.rule = rule;
  e.action = action;
  e.summary = "Xid 79 on 0000:3b:00: GPU has fallen off the bus";
  e.message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, name=x, GPU has fallen off the bus.";
  e.detected_time = std::chrono::system_clock::now();
  e.log_time = e.detected_time;
  return e;
}

TEST_CASE("the own-node API refuses every call about another node before it reaches the API") {
  FakeNodeApi fake;
  fake.AddNode("me");
  fake.AddNode("other");
  OwnNodeApi api("me", fake, fake);

  CHECK(api.GetNode("other").status().code() == StatusCode::kPermissionDenied);
  NodeChange change;
  change.add_taint = NodeTaint{"faultline.dev/faulty", "true", "NoSchedule", ""};
  CHECK(api.UpdateNode("other", change).code() == StatusCode::kPermissionDenied);
  NodeEvent event;
  event.node = "other";
  CHECK(api.CreateEvent(event).code() == StatusCode::kPermissionDenied);
  CHECK(fake.calls() == 0);
  CHECK_FALSE(fake.HasTaint("other", "faultline.dev/faulty"));

  CHECK(api.UpdateNode("me", change).ok());
  CHECK(fake.HasTaint("me", "faultline.dev/faulty"));
}

TEST_CASE("the own-node API answers ListNodes with one GetNode of its node, never a list") {
  FakeNodeApi fake;
  fake.AddNode("me", {{"gpu", "true"}});
  fake.AddNode("other", {{"gpu", "true"}});
  OwnNodeApi api("me", fake, fake);

  Result<std::vector<NodeInfo>> all = api.ListNodes("");
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].name == "me");
  Result<std::vector<NodeInfo>> gpu = api.ListNodes("gpu=true");
  REQUIRE(gpu.ok());
  CHECK(gpu->size() == 1);
  Result<std::vector<NodeInfo>> none = api.ListNodes("gpu!=true");
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK(fake.calls(Op::kList) == 0);
  CHECK(fake.calls(Op::kGet) == 3);

  fake.RemoveNode("me");
  Result<std::vector<NodeInfo>> gone = api.ListNodes("");
  REQUIRE(gone.ok());
  CHECK(gone->empty());
  fake.FailNext(UnavailableError("down"), Op::kGet);
  CHECK(api.ListNodes("").status().code() == StatusCode::kUnavailable);
}

TEST_CASE("a Tainter behind the own-node API adopts, resyncs and taints only its own node") {
  FakeNodeApi fake;
  fake.AddNode("me");
  fake.AddNode("other");
  OwnNodeApi api("me", fake, fake);
  MetricsRegistry metrics;
  FakeClock clock;
  Tainter::Options options;
  options.resync_interval = std::chrono::seconds(1);
  auto tainter = Tainter::Create(options, ApplierApis{api, api}, metrics, clock);
  REQUIRE(tainter.ok());
  REQUIRE((*tainter)->AdoptAll().ok());
  (*tainter)->Handle(Ev("me", "e1"));
  clock.Advance(std::chrono::seconds(2));
  (*tainter)->Tick();                     // resync
  (*tainter)->Handle(Ev("other", "e2"));  // as a bug would: refused each try, never sent
  clock.Advance(std::chrono::hours(1));
  (*tainter)->Tick();

  CHECK(fake.HasTaint("me", "faultline.dev/faulty", "NoSchedule"));
  CHECK_FALSE(fake.HasTaint("other", "faultline.dev/faulty"));
  CHECK(fake.EventsFor("other").empty());
  CHECK(fake.calls(Op::kList) == 0);
}

// Return to service on the agent's own node (tainter/README.md "Return to
// service"): after a reboot the agent is a new process; it adopts its node,
// sees the kubelet's new status.nodeInfo.bootID and lifts the `recover:
// reboot` fault after the probation, counted from its start.
TEST_CASE("standalone: after a reboot the restarted agent returns its own node to service") {
  FakeNodeApi fake;
  fake.AddNode("me");
  fake.MutateNode("me", [](NodeInfo& n) { n.boot_id = "boot-a"; });
  OwnNodeApi api("me", fake, fake);
  MetricsRegistry metrics;
  FakeClock clock;
  Tainter::Options options;
  {
    auto before = Tainter::Create(options, ApplierApis{api, api}, metrics, clock);
    REQUIRE(before.ok());
    REQUIRE((*before)->AdoptAll().ok());
    FaultEvent e = Ev("me", "e1");
    e.boot_id = "boot-a";
    e.recover = "reboot";
    e.detected_time = e.log_time = clock.Now();
    (*before)->Handle(e);
    REQUIRE(fake.HasTaint("me", "faultline.dev/faulty", "NoSchedule"));
  }
  // The reboot: the old agent is gone, the kubelet reports a new boot id.
  fake.MutateNode("me", [](NodeInfo& n) { n.boot_id = "boot-b"; });
  clock.Advance(std::chrono::minutes(1));
  auto after = Tainter::Create(options, ApplierApis{api, api}, metrics, clock);
  REQUIRE(after.ok());
  REQUIRE((*after)->AdoptAll().ok());
  // Quiet past the probation, but its checks have not reported from the
  // new boot: the node stays out (verified lift, issue 28).
  clock.Advance(std::chrono::minutes(10));
  (*after)->Tick();
  CHECK(fake.HasTaint("me", "faultline.dev/faulty", "NoSchedule"));
  // The agent's first check round of the new boot passes (rule check.round).
  FaultEvent round = Ev("me", "round-1", Action::kEvent, "check.round");
  round.boot_id = "boot-b";
  round.fields = {{"status", "ok"}, {"passed", "4"}, {"checks", "4"}, {"names", "a,b,c,d"}};
  round.detected_time = round.log_time = clock.Now();
  (*after)->Handle(round);
  (*after)->Tick();
  CHECK_FALSE(fake.HasTaint("me", "faultline.dev/faulty"));
  const NodeInfo node = *fake.Node("me");
  REQUIRE(node.annotations.count("faultline.dev/recoveries") == 1);
  CHECK(node.annotations.at("faultline.dev/recoveries").find("\"how\":\"reboot\"") !=
        std::string::npos);
  CHECK(node.annotations.at("faultline.dev/recoveries").find("\"how\":\"validation\"") !=
        std::string::npos);
  bool recovered = false;
  for (const NodeEvent& ev : fake.EventsFor("me")) recovered |= ev.reason == "FaultlineRecovered";
  CHECK(recovered);
}

TEST_CASE("the dry-run API prints the exact JSON Patch and builds each on the previous one") {
  std::ostringstream out;
  FakeClock clock;
  DryRunNodeApi api("gpu-1", out, clock);
  NodeChange taint;
  taint.add_taint = NodeTaint{"faultline.dev/faulty", "true", "NoSchedule", ""};
  taint.annotations["faultline.dev/reasons"] = "[]";
  REQUIRE(api.UpdateNode("gpu-1", taint).ok());
  const std::string first = out.str();
  CHECK(first.find("PATCH /api/v1/nodes/gpu-1") != std::string::npos);
  CHECK(first.find("\"path\": \"/metadata/resourceVersion\"") != std::string::npos);
  CHECK(first.find("\"value\": \"0\"") != std::string::npos);
  CHECK(first.find("\"path\": \"/spec/taints\"") != std::string::npos);
  CHECK(first.find("\"key\": \"faultline.dev/faulty\"") != std::string::npos);
  CHECK(first.find("\"path\": \"/metadata/annotations\"") != std::string::npos);

  // The same change again: already in effect, nothing would be sent.
  REQUIRE(api.UpdateNode("gpu-1", taint).ok());
  CHECK(out.str() == first);
  CHECK(api.patches() == 1);

  NodeChange lift;
  lift.remove_taint = taint.add_taint;
  lift.annotations["faultline.dev/reasons"] = std::nullopt;
  REQUIRE(api.UpdateNode("gpu-1", lift).ok());
  const std::string second = out.str().substr(first.size());
  CHECK(second.find("\"value\": \"1\"") != std::string::npos);  // the copy's new version
  CHECK(second.find("\"op\": \"remove\"") != std::string::npos);
  CHECK(second.find("/spec/taints/0") != std::string::npos);
  CHECK(api.patches() == 2);
  Result<NodeInfo> node = api.GetNode("gpu-1");
  REQUIRE(node.ok());
  CHECK(node->taints.empty());
  CHECK(api.GetNode("gpu-2").status().code() == StatusCode::kNotFound);

  NodeEvent event;
  event.node = "gpu-1";
  event.reason = "FaultlineFault";
  event.message = "nvidia.xid: Xid 13";
  REQUIRE(api.CreateEvent(event).ok());
  CHECK(out.str().find("POST /api/v1/namespaces/default/events") != std::string::npos);
  CHECK(out.str().find("Event Warning FaultlineFault on node gpu-1: nvidia.xid: Xid 13") !=
        std::string::npos);
  CHECK(api.events() == 1);
}

struct SinkFixture {
  FakeNodeApi fake;
  OwnNodeApi api{"me", fake, fake};
  MetricsRegistry metrics;
  FakeClock clock;
  std::unique_ptr<Tainter> tainter;
  SinkFixture() {
    fake.AddNode("me");
    Tainter::Options options;
    options.initial_backoff = std::chrono::milliseconds(1);
    auto t = Tainter::Create(options, ApplierApis{api, api}, metrics, clock);
    REQUIRE(t.ok());
    tainter = std::move(*t);
    REQUIRE(tainter->AdoptAll().ok());
  }
};

TEST_CASE("the sink's delivery callback runs once the taint is on the node, never in Publish") {
  SinkFixture f;
  StandaloneSink sink(*f.tainter, f.clock, {});
  int delivered = 0;
  bool tainted_at_callback = false;
  REQUIRE(sink.Publish(Ev("me", "e1"),
                       [&](const Status& s) {
                         CHECK(s.ok());
                         ++delivered;
                         tainted_at_callback = f.fake.HasTaint("me", "faultline.dev/faulty");
                       })
              .ok());
  CHECK(delivered == 0);
  CHECK(f.fake.calls(Op::kUpdate) == 0);
  sink.Poll(std::chrono::milliseconds(0));
  CHECK(delivered == 1);
  CHECK(tainted_at_callback);
  CHECK(sink.Flush(std::chrono::milliseconds(0)) == 0);
}

TEST_CASE("a write the API refuses retriably holds the callback until a retry lands") {
  SinkFixture f;
  StandaloneSink sink(*f.tainter, f.clock, {});
  f.fake.FailNext(UnavailableError("apiserver down"), Op::kUpdate);
  int delivered = 0;
  REQUIRE(sink.Publish(Ev("me", "e1"), [&](const Status&) { ++delivered; }).ok());
  sink.Poll(std::chrono::milliseconds(0));
  CHECK(delivered == 0);
  CHECK_FALSE(f.fake.HasTaint("me", "faultline.dev/faulty"));
  f.clock.Advance(std::chrono::seconds(2));  // past the backoff and the tick interval
  CHECK(sink.Flush(std::chrono::seconds(2)) == 0);
  CHECK(delivered == 1);
  CHECK(f.fake.HasTaint("me", "faultline.dev/faulty"));
}

TEST_CASE("a full sink answers kResourceExhausted without taking the callback") {
  SinkFixture f;
  StandaloneSink::Options options;
  options.max_queued = 1;
  StandaloneSink sink(*f.tainter, f.clock, options);
  int delivered = 0;
  REQUIRE(sink.Publish(Ev("me", "e1"), [&](const Status&) { ++delivered; }).ok());
  CHECK(sink.Publish(Ev("me", "e2"), [&](const Status&) { ++delivered; }).code() ==
        StatusCode::kResourceExhausted);
  sink.Poll(std::chrono::milliseconds(0));
  CHECK(delivered == 1);
}

TEST_CASE("standalone mode needs no kafka key, and the empty config gives local defaults") {
  Diagnostics diags;
  auto c = ParseStandaloneAgentConfig("", "<defaults>", diags, AgentMode::kStandalone);
  REQUIRE(c.has_value());
  CHECK(c->metrics_address == "127.0.0.1:9400");
  CHECK(c->kmsg_enabled);
  CHECK(c->journal.skip_kernel_transport == c->kmsg_enabled);
  CHECK(c->standalone.tainter.taint.key == "faultline.dev/faulty");
  CHECK_FALSE(c->standalone.dry_run);

  Diagnostics kafka_diags;
  CHECK_FALSE(
      ParseStandaloneAgentConfig("", "<defaults>", kafka_diags, AgentMode::kKafka).has_value());

  Diagnostics set;
  auto s = ParseStandaloneAgentConfig(
      "node_name: n\nkubernetes: {kubeconfig: /k, qps: 2.5}\n"
      "standalone: {dry_run: true, taint: {key: trainy.konduktor.ai/faulty}, "
      "valve: {max_new_taints: 1, window: 1h}}\n",
      "s.yaml", set, AgentMode::kStandalone);
  REQUIRE(s.has_value());
  CHECK(s->standalone.kubernetes.kubeconfig == "/k");
  CHECK(s->standalone.kubernetes.qps == doctest::Approx(2.5));
  CHECK(s->standalone.dry_run);
  CHECK(s->standalone.tainter.taint.key == "trainy.konduktor.ai/faulty");
  CHECK(s->standalone.tainter.policy.max_new_taints == 1);
  CHECK(s->standalone.tainter.policy.new_taint_window == std::chrono::hours(1));

  Diagnostics bad;
  CHECK_FALSE(ParseStandaloneAgentConfig("standalone: {taint: {effect: Never}, bogus: 1}\n",
                                         "b.yaml", bad, AgentMode::kStandalone)
                  .has_value());
  CHECK(bad.error_count() == 2);
}

}  // namespace
TEST_CASE("the /dev/kmsg advice follows a refused /dev/kmsg only, not any refusal") {
  Diagnostics diags;
  auto c = ParseStandaloneAgentConfig("", "<defaults>", diags, AgentMode::kStandalone);
  REQUIRE(c.has_value());
  const std::string kmsg = c->kmsg.device_path;
  // What KmsgDevice::Open returns where the agent lacks root or CAP_SYSLOG.
  CHECK(AssembleErrorHint(PermissionDeniedError("open " + kmsg + ": Permission denied"), *c)
            .find("needs root or CAP_SYSLOG") != std::string::npos);
  // A state directory it may not write: the kmsg advice would mislead.
  CHECK(AssembleErrorHint(
            PermissionDeniedError("mkdir /var/lib/faultline/agent: Permission denied"), *c)
            .empty());
  CHECK(
      AssembleErrorHint(NotFoundError("open " + kmsg + ": No such file or directory"), *c).empty());
  c->kmsg_enabled = false;
  CHECK(
      AssembleErrorHint(PermissionDeniedError("open " + kmsg + ": Permission denied"), *c).empty());
}

}  // namespace faultline
