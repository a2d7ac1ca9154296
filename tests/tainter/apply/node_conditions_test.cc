// SPDX-License-Identifier: Apache-2.0
// faultline's NodeConditions (tainter/core/conditions.h): what is written, when,
// and that nothing of another writer is lost, against the API double over
// HTTPS. Each API semantic a test relies on is written beside it.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/log.h"
#include "base/time_format.h"
#include "tainter/apply/node_applier.h"
#include "tainter/core/conditions.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/kube/kube_node_json.h"
#include "tests/fakes/sample_event.h"
#include "tests/tainter/apply/kube_tainter_fixture.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;

Reason MakeReason(std::string rule, std::string condition,
                  std::chrono::system_clock::time_point first_seen) {
  Reason r;
  r.rule = std::move(rule);
  r.summary = "summary of " + r.rule;
  r.condition = std::move(condition);
  r.first_seen = r.last_seen = first_seen;
  return r;
}

const std::set<std::string> kOwned = {"GPUFault", "GPUInterconnectFault", "NetworkFault",
                                      "HostFault"};

TEST_CASE("ConditionUpdates: True on a fault, nothing when unchanged, False when lifted") {
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  std::vector<NodeCondition> live = {{"Ready", "True", "KubeletReady", "ok", "x", "x"}};

  std::vector<Reason> active = {MakeReason("nvidia.xid", "GPUFault", t0)};
  std::vector<NodeCondition> up = ConditionUpdates(live, active, kOwned, t0);
  REQUIRE(up.size() == 1);  // Ready is not ours: never written
  CHECK(up[0].type == "GPUFault");
  CHECK(up[0].status == "True");
  CHECK(up[0].reason == "NvidiaXid");
  CHECK(up[0].message == "nvidia.xid: summary of nvidia.xid");
  CHECK(up[0].last_transition_time == KubeTime(t0));
  CHECK(up[0].last_heartbeat_time == KubeTime(t0));
  live.push_back(up[0]);

  // The same state an hour later: no write at all (no heartbeat-only write).
  CHECK(ConditionUpdates(live, active, kOwned, t0 + hours(1)).empty());

  // A second rule of the same type: the message changes, the status does
  // not, so lastTransitionTime stays at the fault's start.
  active.push_back(MakeReason("nvidia.gpu-fallen-off-bus", "GPUFault", t0 + minutes(5)));
  up = ConditionUpdates(live, active, kOwned, t0 + hours(1));
  REQUIRE(up.size() == 1);
  CHECK(up[0].status == "True");
  CHECK(up[0].reason == "NvidiaXid");  // the earliest reason keeps naming it
  CHECK(up[0].message.find("(+1 more: nvidia.gpu-fallen-off-bus)") != std::string::npos);
  CHECK(up[0].last_transition_time == KubeTime(t0));
  CHECK(up[0].last_heartbeat_time == KubeTime(t0 + hours(1)));
  live.back() = up[0];

  // Lifted: False, a new transition. Owned types never set stay absent.
  up = ConditionUpdates(live, {}, kOwned, t0 + hours(2));
  REQUIRE(up.size() == 1);
  CHECK(up[0].type == "GPUFault");
  CHECK(up[0].status == "False");
  CHECK(up[0].reason == std::string(kConditionLiftedReason));
  CHECK(up[0].last_transition_time == KubeTime(t0 + hours(2)));
  live.back() = up[0];
  CHECK(ConditionUpdates(live, {}, kOwned, t0 + hours(3)).empty());

  // A True condition of a type faultline does not own is never set False.
  live.push_back({"KernelDeadlock", "True", "DockerHung", "npd", "x", "x"});
  CHECK(ConditionUpdates(live, {}, kOwned, t0 + hours(3)).empty());
}

TEST_CASE("condition types: by category, the rule's condition wins, reasons are CamelCase") {
  FaultEvent e;
  e.category = "hardware";
  CHECK(ConditionTypeFor(e) == "GPUFault");
  e.category = "network";
  CHECK(ConditionTypeFor(e) == "NetworkFault");
  e.category = "storage";
  CHECK(ConditionTypeFor(e) == "HostFault");
  e.category = "application";
  CHECK(ConditionTypeFor(e).empty());
  e.condition = "GPUInterconnectFault";
  CHECK(ConditionTypeFor(e) == "GPUInterconnectFault");
  CHECK(ConditionReason("host.pcie-aer-fatal") == "HostPcieAerFatal");
  CHECK(ConditionReason("1x.y") == "Rule1xY");
}

bool HasCondition(const json& node, const std::string& type, const std::string& status) {
  for (const json& c : node["status"]["conditions"]) {
    if (c.value("type", "") == type && c.value("status", "") == status) return true;
  }
  return false;
}

TEST_CASE("the API double: a strategic merge patch on nodes/status merges conditions by type") {
  // kube-apiserver: NodeStatus.conditions is declared `patchStrategy:"merge"
  // patchMergeKey:"type"` (k8s.io/api core/v1 types.go), so a strategic
  // merge patch to /status merges each entry into the one of the same type
  // and keeps the others; a JSON merge patch (RFC 7386) replaces the whole
  // array. The status subresource changes only status; a PATCH of the node
  // itself keeps the old status (nodeStrategy / nodeStatusStrategy
  // PrepareForUpdate). faultline therefore sends the strategic merge patch.
  KubeFixture f;
  f.server->AddNode("gpu-1");
  f.server->MutateNode("gpu-1", [](json& n) {
    n["status"]["conditions"].push_back({{"type", "KernelDeadlock"}, {"status", "False"}});
  });
  // A concurrent writer (NPD) sets its condition just before our PATCH is
  // applied: no read-modify-write on our side, so nothing to lose.
  f.server->BeforeNextNodeWrite([](FakeApiServer& s) {
    s.MutateNode("gpu-1", [](json& n) {
      n["status"]["conditions"].push_back(
          {{"type", "FrequentKubeletRestart"}, {"status", "False"}});
    });
  });
  REQUIRE(f.Api()
              .PatchNodeConditions("gpu-1", {{"GPUFault", "True", "NvidiaXid", "Xid 79", "", ""}})
              .ok());
  json node = *f.server->GetNodeJson("gpu-1");
  CHECK(HasCondition(node, "FrequentKubeletRestart", "False"));
  CHECK(HasCondition(node, "Ready", "True"));
  CHECK(HasCondition(node, "KernelDeadlock", "False"));
  CHECK(HasCondition(node, "GPUFault", "True"));
  CHECK(node["status"]["conditions"].size() == 4);
  const auto requests = f.server->Requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back().path == "/api/v1/nodes/gpu-1/status");
  CHECK(requests.back().content_type == "application/strategic-merge-patch+json");

  // What a JSON merge patch would have done: drop Ready and KernelDeadlock.
  json copy = node;
  copy.merge_patch(BuildConditionsPatch({{"GPUFault", "False", "X", "", "", ""}}));
  CHECK(copy["status"]["conditions"].size() == 1);

  // A PATCH of the node (not /status) cannot change status.
  json before = node["status"];
  f.server->PutNodeJson(node);  // unchanged, bumps the version
  NodeChange change;
  change.annotations["example.com/x"] = "1";
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());
  CHECK((*f.server->GetNodeJson("gpu-1"))["status"] == before);
}

// A Tainter over KubeNodeApi against the double, with one node; its Xid 79
// expires after an hour.
struct TainterFixture : KubeTainterFixture {
  FaultEvent Xid79(const std::string& cursor) const {
    FaultEvent e = KubeTainterFixture::Xid79(cursor);
    e.expire = hours(1);
    return e;
  }
  json Condition(const std::string& type) {
    const json node = Node();  // kept: a range-for over a temporary's member dangles
    for (const json& c : node["status"]["conditions"]) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }
  int StatusWrites() { return f.server->CountRequests("PATCH", "/api/v1/nodes/gpu-1/status"); }
};

TEST_CASE("a taint sets GPUFault=True, a repeat writes no status, expiry sets it False") {
  TainterFixture t;
  // Another writer (the kubelet, NPD) adds its condition between our read
  // and our write: the merge by type keeps it.
  t.f.server->MutateNode("gpu-1", [](json& n) {
    n["status"]["conditions"].push_back(
        {{"type", "KernelDeadlock"}, {"status", "False"}, {"reason", "KernelHasNoDeadlock"}});
  });
  t.tainter->Handle(t.Xid79("boot:1"));
  REQUIRE(t.tainter->pending() == 0);
  json c = t.Condition("GPUFault");
  REQUIRE(c.is_object());
  CHECK(c["status"] == "True");
  CHECK(c["reason"] == "NvidiaXid");
  CHECK(c["message"].get<std::string>().find("fallen off the bus") != std::string::npos);
  const std::string transition = c["lastTransitionTime"];
  CHECK(transition == KubeTime(t.f.clock.Now()));
  CHECK(HasCondition(t.Node(), "Ready", "True"));
  CHECK(HasCondition(t.Node(), "KernelDeadlock", "False"));
  CHECK(t.StatusWrites() == 1);

  // The same fault again ten minutes later: the reasons are refreshed, the
  // condition already says it: no status write.
  t.f.clock.Advance(minutes(10));
  t.tainter->Handle(t.Xid79("boot:2"));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.StatusWrites() == 1);
  CHECK(t.Condition("GPUFault")["lastTransitionTime"] == transition);

  // Quiet past `expire`: the taint is lifted and the condition goes False,
  // with a new transition time; the foreign conditions are still there.
  t.f.clock.Advance(hours(2));
  t.tainter->Tick();
  REQUIRE(t.tainter->pending() == 0);
  c = t.Condition("GPUFault");
  CHECK(c["status"] == "False");
  CHECK(c["reason"] == std::string(kConditionLiftedReason));
  CHECK(c["lastTransitionTime"] == KubeTime(t.f.clock.Now()));
  CHECK(HasCondition(t.Node(), "KernelDeadlock", "False"));
  CHECK(HasCondition(t.Node(), "Ready", "True"));
  CHECK(t.StatusWrites() == 2);
}

TEST_CASE("untaint by hand sets faultline's condition False and no other") {
  TainterFixture t;
  FaultEvent e = t.Xid79("boot:1");
  e.expire.reset();
  e.condition = "GPUInterconnectFault";  // the rule's `condition:` override
  t.tainter->Handle(e);
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.Condition("GPUInterconnectFault")["status"] == "True");
  CHECK(t.Condition("GPUFault").is_null());  // never set: stays absent
  REQUIRE(t.tainter->Untaint("gpu-1", "GPU reseated").ok());
  CHECK(t.Condition("GPUInterconnectFault")["status"] == "False");
  CHECK(t.Condition("GPUFault").is_null());
  CHECK(HasCondition(t.Node(), "Ready", "True"));
}

TEST_CASE("a taint lifted with kubectl, seen by the watch, sets the condition False") {
  TainterFixture t;
  t.tainter->Handle(t.Xid79("boot:1"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Condition("GPUFault")["status"] == "True");
  // `kubectl taint node gpu-1 faultline.dev/faulty-`: a foreign write.
  t.f.server->MutateNode("gpu-1", [](json& n) { n["spec"].erase("taints"); });
  Result<NodeInfo> seen = NodeInfoFromJson(t.Node());
  REQUIRE(seen.ok());
  t.tainter->ObserveNode(*seen);  // what the node watch delivers
  CHECK(t.Condition("GPUFault")["status"] == "False");
  CHECK(t.StatusWrites() == 2);
  // Seeing the node again (our own write coming back) writes nothing.
  seen = NodeInfoFromJson(t.Node());
  REQUIRE(seen.ok());
  t.tainter->ObserveNode(*seen);
  CHECK(t.StatusWrites() == 2);
}

// Issue 28, item 7: a drain past its deadline (remediation) is reported on
// the node's condition too, where a health check or `kubectl describe node`
// sees it.
TEST_CASE("a node that needs a person says so in its condition's reason until the fault lifts") {
  TainterFixture t;
  FaultEvent e = t.Xid79("boot:1");
  e.expire.reset();
  t.tainter->Handle(e);
  REQUIRE(t.tainter->pending() == 0);
  const std::string transition = t.Condition("GPUFault")["lastTransitionTime"];
  t.f.clock.Advance(minutes(31));
  t.tainter->MarkNeedsPerson("gpu-1", "drain did not finish within 30m");
  json c = t.Condition("GPUFault");
  CHECK(c["status"] == "True");
  CHECK(c["reason"] == "FaultlineDrainTimedOut");
  CHECK(c["message"].get<std::string>().starts_with("drain did not finish within 30m. nvidia.xid"));
  CHECK(c["lastTransitionTime"] == transition);  // still the fault's "True since"
  CHECK(t.StatusWrites() == 2);
  // Seen again through the watch: it already says so, no write.
  Result<NodeInfo> seen = NodeInfoFromJson(t.Node());
  REQUIRE(seen.ok());
  t.tainter->ObserveNode(*seen);
  CHECK(t.StatusWrites() == 2);
  // Lifted: False as for any lift, and the note is gone with the fault.
  REQUIRE(t.tainter->Untaint("gpu-1", "GPU replaced").ok());
  CHECK(t.Condition("GPUFault")["status"] == "False");
  CHECK(t.Condition("GPUFault")["reason"] == std::string(kConditionLiftedReason));
  t.tainter->Handle(t.Xid79("boot:2"));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.Condition("GPUFault")["reason"] == "NvidiaXid");
}

TEST_CASE("the watch's pictures of our own taint, taken together, cost no request") {
  TainterFixture t;
  t.tainter->Handle(t.Xid79("boot:1"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Condition("GPUFault")["status"] == "True");
  // The watch delivers the node as of our patch of it (the taint, not yet
  // the condition), then as of our status patch. Taken in one batch, the
  // last picture is the one to judge: before, the first one's stale
  // conditions cost a GET per taint (a storm's 7th request).
  json before_status = t.Node();
  before_status["status"]["conditions"] = json::array();
  Result<NodeInfo> first = NodeInfoFromJson(before_status);
  Result<NodeInfo> last = NodeInfoFromJson(t.Node());
  REQUIRE(first.ok());
  REQUIRE(last.ok());
  t.f.server->ClearRequests();
  std::vector<NodeWatchChange> batch(2);
  batch[0].objects = {*first};
  batch[1].objects = {*last};
  t.tainter->Observe(std::move(batch));
  CHECK(t.f.server->Requests().empty());
  // A picture that is the last of its batch is still judged: a kubectl lift.
  t.f.server->MutateNode("gpu-1", [](json& n) { n["spec"].erase("taints"); });
  Result<NodeInfo> lifted = NodeInfoFromJson(t.Node());
  REQUIRE(lifted.ok());
  std::vector<NodeWatchChange> one(1);
  one[0].objects = {*lifted};
  t.tainter->Observe(std::move(one));
  CHECK(t.Condition("GPUFault")["status"] == "False");
}

TEST_CASE("the condition has the shape draino, NodeHealthCheck and MachineHealthCheck read") {
  // Each tool's documented configuration (tainter/README.md, "Node
  // conditions") reads a condition by exact `type`, a `status` string
  // ("True", not a boolean), and counts its duration from
  // lastTransitionTime, which must be a metav1.Time (RFC 3339, whole
  // seconds, UTC) and must not move while the fault lasts.
  struct Reader {
    const char* tool;
    const char* type;
    const char* status;
  };
  const Reader readers[] = {
      {"draino (positional condition args)", "GPUFault", "True"},
      {"medik8s NodeHealthCheck unhealthyConditions", "GPUFault", "True"},
      {"Cluster API MachineHealthCheck unhealthyConditions", "GPUFault", "True"},
  };
  TainterFixture t;
  t.tainter->Handle(t.Xid79("boot:1"));
  const std::string start = KubeTime(t.f.clock.Now());
  t.f.clock.Advance(minutes(7));
  t.tainter->Handle(t.Xid79("boot:2"));
  for (const Reader& r : readers) {
    CAPTURE(r.tool);
    json c = t.Condition(r.type);
    REQUIRE(c.is_object());
    CHECK(c["status"].is_string());
    CHECK(c["status"] == r.status);
    REQUIRE(c["lastTransitionTime"].is_string());
    CHECK(c["lastTransitionTime"] == start);  // "True for 5m" holds after 7 minutes
    CHECK(ParseRfc3339(c["lastTransitionTime"].get<std::string>()).has_value());
    CHECK(c["reason"].is_string());
    CHECK(c["message"].is_string());
  }
}

TEST_CASE("Karpenter #2833: a repair controller waiting from lastTransitionTime gets to act") {
  // The failure mode: a repair controller (Karpenter's node repair, a
  // NodeHealthCheck) acts once a condition has been True for N minutes,
  // counted from lastTransitionTime. A writer that resets that time on
  // every report of a fault that keeps being reported holds it off forever.
  // Here the same fault is reported every 2 minutes for 40 minutes, with
  // a log line that differs each time, a second rule of the same type
  // joining, and a tainter restart in between; the controller must see the
  // time stay put and fire after its 30 minutes.
  TainterFixture t;
  auto repair_due = [&](std::chrono::minutes wait) {
    const json c = t.Condition("GPUFault");
    if (!c.is_object() || c["status"] != "True") return false;
    auto since = ParseRfc3339(c["lastTransitionTime"].get<std::string>());
    return since && t.f.clock.Now() - *since >= wait;
  };
  t.tainter->Handle(t.Xid79("boot:0"));
  REQUIRE(t.tainter->pending() == 0);
  const json first = t.Condition("GPUFault");
  const std::string start = first["lastTransitionTime"];
  int fired_at = -1;
  for (int minute = 2; minute <= 40; minute += 2) {
    t.f.clock.Advance(minutes(2));
    FaultEvent again = t.Xid79("boot:" + std::to_string(minute));
    again.message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=" + std::to_string(1000 + minute) +
                    ", GPU has fallen off the bus.";
    if (minute == 10) {  // another GPU rule joins: the message changes, the status does not
      again.rule = "nvidia.gpu-fallen-off-bus";
      again.id = MakeEventId("gpu-1", "kmsg", "fob", again.rule);
    }
    t.tainter->Handle(again);
    REQUIRE(t.tainter->pending() == 0);
    if (minute == 20) {  // a new tainter process adopts the node
      auto restarted = Tainter::Create(t.tainter->options(), ApplierApis::All(t.f.Api()),
                                       t.f.metrics, t.f.clock);
      REQUIRE(restarted.ok());
      t.tainter = std::move(*restarted);
      REQUIRE(t.tainter->AdoptAll().ok());
      t.tainter->Tick();
    }
    const json c = t.Condition("GPUFault");
    CAPTURE(minute);
    CHECK(c["status"] == "True");
    CHECK(c["lastTransitionTime"] == start);
    CHECK(c["reason"] == "NvidiaXid");  // stable: the state, not the latest line
    if (fired_at < 0 && repair_due(minutes(30))) fired_at = minute;
  }
  CHECK(fired_at == 30);
}

TEST_CASE("node_conditions: false in the config: the taint without any status write") {
  Result<TainterConfig> c = ParseTainterConfig(
      "kafka: {brokers: 'localhost:9092'}\nnode_conditions: false\n", "tainter.yaml");
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  CHECK_FALSE(c->tainter.node_conditions);
  REQUIRE(ParseTainterConfig("kafka: {brokers: 'localhost:9092'}\n", "tainter.yaml").ok());
  CHECK(ParseTainterConfig("kafka: {brokers: 'localhost:9092'}\n", "tainter.yaml")
            ->tainter.node_conditions);

  KubeFixture f;
  f.server->AddNode("gpu-1", {{"gpu", "true"}});
  Tainter::Options o = c->tainter;
  o.node_selector = "gpu=true";
  auto t = Tainter::Create(o, ApplierApis::All(f.Api()), f.metrics, f.clock);
  REQUIRE(t.ok());
  REQUIRE((*t)->AdoptAll().ok());
  (*t)->Handle(
      SampleEvent("gpu-1", MakeEventId("gpu-1", "kmsg", "boot:1", "nvidia.xid"), f.clock.Now()));
  REQUIRE((*t)->pending() == 0);
  CHECK(f.server->CountRequests("PATCH", "/api/v1/nodes/gpu-1") == 1);  // the taint
  CHECK(f.server->CountRequests("PATCH", "/api/v1/nodes/gpu-1/status") == 0);
}

}  // namespace
}  // namespace faultline
