// SPDX-License-Identifier: Apache-2.0
// Return to service (tainter/core/recovery.h): a reboot plus probation, a clear
// rule and a recurring fault, through a Tainter over KubeNodeApi against the
// API double (HTTPS) with a FakeClock. Each API semantic a test relies on is
// written beside it.
#include "tainter/core/recovery.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/log.h"
#include "base/time_format.h"
#include "matcher/rule_set.h"
#include "tainter/apply/node_applier.h"
#include "tainter/core/conditions.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/kube/kube_node_json.h"
#include "tests/tainter/apply/kube_tainter_fixture.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// One managed node gpu-1 booted as "boot-a", a Tainter with a 10m probation
// and a 24h recurring window (the defaults).
struct RecoveryFixture : KubeTainterFixture {
  RecoveryFixture()
      : KubeTainterFixture([](FakeApiServer& s) { REQUIRE(s.SetBootId("gpu-1", "boot-a")); }) {}
  // Xid 79 from a rule with `recover: reboot` and no expire.
  FaultEvent Xid79(const std::string& cursor, const std::string& boot_id = "boot-a") const {
    FaultEvent e = KubeTainterFixture::Xid79(cursor);
    e.boot_id = boot_id;
    e.recover = "reboot";
    return e;
  }
  // A `clear:` rule's match: the fabric manager says the NVLink is back.
  FaultEvent Cleared(const std::string& cursor, std::vector<std::string> clears) {
    FaultEvent e;
    e.id = MakeEventId("gpu-1", "journal", cursor, "nvidia.fabric-recovered");
    e.node = "gpu-1";
    e.boot_id = "boot-a";
    e.source = "journal";
    e.rule = "nvidia.fabric-recovered";
    e.category = "informational";
    e.action = Action::kEvent;
    e.severity = Severity::kInfo;
    e.summary = "fabric manager: NVLink training completed";
    e.message = "fabric manager: NVLink training completed on all links";
    e.log_time = e.detected_time = f.clock.Now();
    e.clears = std::move(clears);
    return e;
  }
  FaultEvent Nvlink(const std::string& cursor) {
    FaultEvent e = Xid79(cursor);
    e.id = MakeEventId("gpu-1", "kmsg", cursor, "nvidia.nvlink");
    e.rule = "nvidia.nvlink";
    e.summary = "NVLink error";
    e.recover.clear();
    return e;
  }
  // The agent's check-round summary (rule check.round) from boot `boot_id`.
  FaultEvent Round(const std::string& cursor, const std::string& boot_id, bool pass,
                   const std::string& message = "every check passed") const {
    FaultEvent e;
    e.id = MakeEventId("gpu-1", "checks", cursor, "check.round");
    e.node = "gpu-1";
    e.boot_id = boot_id;
    e.source = "checks";
    e.origin = Origin::kCheck;
    e.rule = "check.round";
    e.pack = "check-rounds";
    e.category = "informational";
    e.action = Action::kEvent;
    e.severity = Severity::kInfo;
    e.fields = {{"status", pass ? "ok" : "fail"},
                {"passed", pass ? "4" : "3"},
                {"checks", "4"},
                {"names", "gpu-inventory,pcie-link,pcie-aer,nvidia-driver"},
                {"message", message}};
    if (!pass) e.fields["failed"] = "gpu-inventory";
    e.summary = "check round";
    e.message = "check=round status=" + e.fields["status"] + " ... msg=" + message;
    e.log_time = e.detected_time = f.clock.Now();
    return e;
  }
  void Handle(const FaultEvent& e) {
    tainter->Handle(e);
    REQUIRE(tainter->pending() == 0);
  }
  json Condition(const std::string& type) {
    const json node = Node();
    for (const json& c : node["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return json::object();
  }
  std::string Label(const std::string& key) {
    const json node = Node();
    const json& l = node["metadata"].value("labels", json::object());
    return l.contains(key) ? l[key].get<std::string>() : std::string();
  }
  // The node reboots into `boot_id` (the kubelet's new status.nodeInfo.bootID).
  void Reboot(const std::string& boot_id) {
    REQUIRE(f.server->SetBootId("gpu-1", boot_id));
    Watch();
  }
  bool Tainted() {
    const json node = Node();
    for (const json& t : node["spec"].value("taints", json::array())) {
      if (t.value("key", "") == "faultline.dev/faulty") return true;
    }
    return false;
  }
  std::string Annotation(const std::string& key) {
    const json node = Node();
    const json& a = node["metadata"].value("annotations", json::object());
    return a.contains(key) ? a[key].get<std::string>() : std::string();
  }
  std::vector<Reason> Reasons() {
    auto rs = DecodeReasons(Annotation("faultline.dev/reasons"));
    return rs ? *rs : std::vector<Reason>();
  }
  std::vector<Recovery> History() {
    return DecodeRecoveries(Annotation("faultline.dev/recoveries"));
  }
  std::string ConditionStatus(const std::string& type) {
    const json node = Node();
    for (const json& c : node["status"].value("conditions", json::array())) {
      if (c.value("type", "") == type) return c.value("status", "");
    }
    return "";
  }
  std::vector<json> EventsWithReason(const std::string& reason) {
    std::vector<json> out;
    for (const json& e : f.server->Events()) {
      if (e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }
  // What the node watch delivers after a change (MODIFIED).
  void Watch() {
    Result<NodeInfo> seen = NodeInfoFromJson(Node());
    REQUIRE(seen.ok());
    tainter->ObserveNode(*seen);
  }
  void Settle() {
    tainter->Tick();
    REQUIRE(tainter->pending() == 0);
  }
  // Xid 79 (kmsg:1) taints gpu-1, the node reboots into boot-b and stays
  // quiet for the 10m probation: the taint is lifted by the reboot.
  void TaintThenRecoverByReboot() {
    tainter->Handle(Xid79("kmsg:1"));
    REQUIRE(tainter->pending() == 0);
    REQUIRE(f.server->SetBootId("gpu-1", "boot-b"));
    Watch();
    Handle(Round("round:b1", "boot-b", true));
    f.clock.Advance(minutes(10));
    Settle();
    REQUIRE_FALSE(Tainted());
  }
};

TEST_CASE("recover: reboot: a new bootID and a quiet probation lift the taint") {
  RecoveryFixture t;
  t.tainter->Handle(t.Xid79("kmsg:1"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Tainted());
  CHECK(t.ConditionStatus("GPUFault") == "True");
  // The boot id the fault was seen in is kept in the reasons annotation.
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].boot_id == "boot-a");
  CHECK(t.Reasons()[0].recover == "reboot");

  // Hours pass without a reboot: nothing lifts it (no expire).
  t.f.clock.Advance(hours(3));
  t.Settle();
  CHECK(t.Tainted());

  // The node reboots: the kubelet reports a new status.nodeInfo.bootID (a
  // status write; the watch sees MODIFIED). Probation starts now.
  REQUIRE(t.f.server->SetBootId("gpu-1", "boot-b"));
  t.Watch();
  // The agent in the new boot reports a passing round of its checks.
  t.Handle(t.Round("round:b1", "boot-b", true));
  t.f.clock.Advance(minutes(9));
  t.Settle();
  CHECK(t.Tainted());  // 9 of 10 minutes
  t.f.clock.Advance(minutes(1));
  t.Settle();
  CHECK_FALSE(t.Tainted());
  CHECK(t.Annotation("faultline.dev/reasons").empty());
  CHECK(t.ConditionStatus("GPUFault") == "False");
  const std::vector<json> recovered = t.EventsWithReason("FaultlineRecovered");
  REQUIRE(recovered.size() == 1);
  CHECK(recovered[0]["type"] == "Normal");
  CHECK(recovered[0]["message"].get<std::string>().find(
            "nvidia.xid recovered (reboot: boot id boot-a -> boot-b, quiet for 10m, check round "
            "passed at ") == 0);
  // The lift is in the node's history, which outlives the reasons, after
  // the reboot and the passing round of the new boot it needed.
  const std::vector<Recovery> history = t.History();
  REQUIRE(history.size() == 3);
  CHECK(history[0].how == "rebooted");
  CHECK(history[1].how == "validation");
  CHECK(history[1].boot_id == "boot-b");
  CHECK(history[1].passed);
  CHECK(history[2].rule == "nvidia.xid");
  CHECK(history[2].how == "reboot");
  CHECK(history[2].boot_id == "boot-b");
  CHECK(history[2].detail.find("check round passed at") != std::string::npos);
  CHECK(t.f.metrics.RenderPrometheus().find(
            "faultline_tainter_taints_lifted_total{why=\"reboot\"} 1") != std::string::npos);
}

TEST_CASE("recover: reboot: a fault after the reboot restarts the wait, per-rule probation") {
  RecoveryFixture t;
  FaultEvent e = t.Xid79("kmsg:1");
  e.probation = minutes(30);  // the rule's own `probation: 30m`
  t.tainter->Handle(e);
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.f.server->SetBootId("gpu-1", "boot-b"));
  t.Watch();
  t.f.clock.Advance(minutes(20));
  // The same fault in the new boot: the reboot did not cure it.
  FaultEvent again = t.Xid79("kmsg:2", "boot-b");
  again.probation = minutes(30);
  t.tainter->Handle(again);
  REQUIRE(t.tainter->pending() == 0);
  t.f.clock.Advance(hours(2));
  t.Settle();
  CHECK(t.Tainted());  // no new boot since that fault
  CHECK(t.Reasons()[0].boot_id == "boot-b");
  REQUIRE(t.f.server->SetBootId("gpu-1", "boot-c"));
  t.Watch();
  t.Handle(t.Round("round:c1", "boot-c", true));
  t.f.clock.Advance(minutes(29));
  t.Settle();
  CHECK(t.Tainted());  // the rule's 30m, not the default 10m
  t.f.clock.Advance(minutes(1));
  t.Settle();
  CHECK_FALSE(t.Tainted());
}

TEST_CASE("a rule without recover is not lifted by a reboot") {
  RecoveryFixture t;
  t.tainter->Handle(t.Nvlink("kmsg:1"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.f.server->SetBootId("gpu-1", "boot-b"));
  t.Watch();
  t.f.clock.Advance(hours(1));
  t.Settle();
  CHECK(t.Tainted());
  CHECK(t.EventsWithReason("FaultlineRecovered").empty());
}

TEST_CASE("a clear rule lifts the reasons it names, and only those") {
  RecoveryFixture t;
  t.tainter->Handle(t.Xid79("kmsg:1"));
  t.f.clock.Advance(seconds(5));
  t.tainter->Handle(t.Nvlink("kmsg:2"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Reasons().size() == 2);
  t.f.clock.Advance(minutes(1));

  // Clears nvidia.nvlink: the Xid stays, and so does the taint.
  t.tainter->Handle(t.Cleared("journal:1", {"nvidia.nvlink"}));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.Tainted());
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].rule == "nvidia.xid");
  REQUIRE(t.EventsWithReason("FaultlineRecovered").size() == 1);
  CHECK(t.History().back().how == "clear");
  CHECK(t.History().back().rule == "nvidia.nvlink");
  // Watching our own write come back must not revive the cleared reason.
  t.Watch();
  t.Settle();
  CHECK(t.Reasons().size() == 1);

  // Clears nvidia.xid too: the last reason goes, so does the taint.
  t.f.clock.Advance(minutes(1));
  t.tainter->Handle(t.Cleared("journal:2", {"nvidia.xid"}));
  REQUIRE(t.tainter->pending() == 0);
  CHECK_FALSE(t.Tainted());
  CHECK(t.ConditionStatus("GPUFault") == "False");
  CHECK(t.EventsWithReason("FaultlineRecovered").size() == 2);
  CHECK(t.History().size() == 2);

  // A clear on an untainted node does nothing.
  const int patches = t.f.server->CountRequests("PATCH", "/api/v1/nodes/gpu-1");
  t.tainter->Handle(t.Cleared("journal:3", {"nvidia.xid"}));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.f.server->CountRequests("PATCH", "/api/v1/nodes/gpu-1") == patches);
}

TEST_CASE("a fault recurring after an automatic recovery goes to a person") {
  RecoveryFixture t;
  t.TaintThenRecoverByReboot();

  // Two hours later (within the 24h recurring_window) the GPU falls off
  // the bus again: tainted, "recurring" in its reason, no way back but a person.
  t.f.clock.Advance(hours(2));
  t.tainter->Handle(t.Xid79("kmsg:2", "boot-b"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Tainted());
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].recurring);
  CHECK(t.Reasons()[0].recover.empty());
  CHECK(t.Reasons()[0].summary.find("recurring after reboot recovery") == 0);
  CHECK(t.ConditionStatus("GPUFault") == "True");

  // Neither a reboot nor a clear line lifts it now.
  REQUIRE(t.f.server->SetBootId("gpu-1", "boot-c"));
  t.Watch();
  t.f.clock.Advance(hours(1));
  t.Settle();
  CHECK(t.Tainted());
  t.tainter->Handle(t.Cleared("journal:1", {"nvidia.xid"}));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.Tainted());
  // A repeat keeps it recurring.
  t.tainter->Handle(t.Xid79("kmsg:3", "boot-c"));
  REQUIRE(t.tainter->pending() == 0);
  CHECK(t.Reasons()[0].recurring);

  // A person can: recorded as a hand lift, with FaultlineRecovered.
  REQUIRE(t.tainter->Untaint("gpu-1", "GPU replaced").ok());
  CHECK_FALSE(t.Tainted());
  CHECK(t.ConditionStatus("GPUFault") == "False");
  CHECK(t.History().back().how == "hand");
  CHECK(t.History().back().detail == "GPU replaced");
  CHECK(t.EventsWithReason("FaultlineRecovered").size() == 2);
}

TEST_CASE("a fault after the recurring window is a fresh fault, recoverable again") {
  RecoveryFixture t;
  t.TaintThenRecoverByReboot();
  t.f.clock.Advance(hours(25));
  t.tainter->Handle(t.Xid79("kmsg:2", "boot-b"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Tainted());
  CHECK_FALSE(t.Reasons()[0].recurring);
  CHECK(t.Reasons()[0].recover == "reboot");
}

TEST_CASE("the recovery history survives a tainter restart and is bounded") {
  RecoveryFixture t;
  t.TaintThenRecoverByReboot();
  // A new tainter process adopts the node: the history on the node is what
  // tells it that a new Xid 79 recurs.
  auto restarted =
      Tainter::Create(t.tainter->options(), ApplierApis::All(t.f.Api()), t.f.metrics, t.f.clock);
  REQUIRE(restarted.ok());
  t.tainter = std::move(*restarted);
  REQUIRE(t.tainter->AdoptAll().ok());
  t.f.clock.Advance(minutes(5));
  t.tainter->Handle(t.Xid79("kmsg:2", "boot-b"));
  REQUIRE(t.tainter->pending() == 0);
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].recurring);

  std::vector<Recovery> history;
  for (int i = 0; i < 20; ++i) {
    AppendRecovery(history, {"r" + std::to_string(i), "expire", "", {}, {}, {}, {}, false});
  }
  CHECK(history.size() == kMaxRecoveryHistory);
  CHECK(history.back().rule == "r19");
  CHECK(DecodeRecoveries(EncodeRecoveries(history)) == history);
  CHECK(DecodeRecoveries("not json").empty());
  // Memory keeps nanoseconds, the annotation microseconds: an entry read
  // back from the node is the same entry, not a second one.
  Recovery fine{"nvidia.xid", "validation", "", {}, {}, {}, "boot-b", true};
  fine.at =
      std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'800'000'000'123'456'789));
  CHECK(MergeRecoveries({fine}, DecodeRecoveries(EncodeRecoveries({fine}))).size() == 1);
}

TEST_CASE("expiry is a recovery too: recorded, with FaultlineRecovered") {
  RecoveryFixture t;
  FaultEvent e = t.Nvlink("kmsg:1");
  e.expire = hours(1);
  t.tainter->Handle(e);
  REQUIRE(t.tainter->pending() == 0);
  t.f.clock.Advance(hours(2));
  t.Settle();
  CHECK_FALSE(t.Tainted());
  REQUIRE(t.History().size() == 1);
  CHECK(t.History()[0].how == "expire");
  CHECK(t.EventsWithReason("FaultlineRecovered").size() == 1);
  CHECK(t.EventsWithReason("FaultlineUntainted").size() == 1);
}

TEST_CASE("verified lift: a reboot is not enough without a passing check round of the new boot") {
  RecoveryFixture t;
  t.Handle(t.Xid79("kmsg:1"));
  const std::string transition = t.Condition("GPUFault").value("lastTransitionTime", "");
  CHECK(t.Condition("GPUFault").value("reason", "") == "NvidiaXid");
  t.f.clock.Advance(minutes(1));
  t.Reboot("boot-b");
  // Rebooted, nothing reported from the new boot yet: the condition says
  // what the node waits for; the status (and its transition time) stays.
  t.Settle();
  CHECK(t.Condition("GPUFault").value("reason", "") == "AwaitingValidation");
  CHECK(t.Condition("GPUFault").value("message", "").find("a passing check round in boot boot-b") !=
        std::string::npos);
  CHECK(t.Condition("GPUFault").value("lastTransitionTime", "") == transition);
  // Quiet for hours, but no round: quiet is not healthy.
  t.f.clock.Advance(hours(2));
  t.Settle();
  CHECK(t.Tainted());
  // A passing round from the OLD boot proves nothing about the new one.
  t.Handle(t.Round("round:a1", "boot-a", true));
  t.Settle();
  CHECK(t.Tainted());
  // The new boot's first complete round passes: lifted at the next tick
  // (the probation is long over), the round recorded with the lift.
  t.Handle(t.Round("round:b1", "boot-b", true));
  t.Settle();
  CHECK_FALSE(t.Tainted());
  CHECK(t.Condition("GPUFault").value("status", "") == "False");
  const std::vector<Recovery> h = t.History();
  REQUIRE_FALSE(h.empty());
  CHECK(h.back().how == "reboot");
  CHECK(h.back().boot_id == "boot-b");
  const Recovery* v = LatestValidation(h, "boot-b");
  REQUIRE(v != nullptr);
  CHECK(v->passed);
  CHECK(h.back().detail.find("check round passed at " + FormatRfc3339(v->at)) != std::string::npos);
}

TEST_CASE(
    "a failing check round after the reboot: ValidationFailed, an Event, the node stays out") {
  RecoveryFixture t;
  t.Handle(t.Xid79("kmsg:1"));
  t.Reboot("boot-b");
  t.Handle(t.Round("round:b1", "boot-b", false,
                   "gpu-inventory: 7 of 8 nvidia accelerators on the PCI bus (node nvidia 7)"));
  t.f.clock.Advance(minutes(30));
  t.Settle();
  CHECK(t.Tainted());
  const json c = t.Condition("GPUFault");
  CHECK(c.value("status", "") == "True");
  CHECK(c.value("reason", "") == "ValidationFailed");
  CHECK(c.value("message", "").find("7 of 8 nvidia accelerators") != std::string::npos);
  const std::vector<json> failed = t.EventsWithReason("FaultlineValidationFailed");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]["type"] == "Warning");
  CHECK(failed[0]["message"].get<std::string>().find("7 of 8 nvidia accelerators") !=
        std::string::npos);
  const std::vector<Recovery> history = t.History();  // held: v points into it
  const Recovery* v = LatestValidation(history, "boot-b");
  REQUIRE(v != nullptr);
  CHECK_FALSE(v->passed);
  // The GPU is back (the agent's verdict changed): now it goes.
  t.Handle(t.Round("round:b2", "boot-b", true));
  t.Settle();
  CHECK_FALSE(t.Tainted());
}

TEST_CASE("a new tainting fault in the boot after the reboot is a failed validation") {
  RecoveryFixture t;
  t.Handle(t.Xid79("kmsg:1"));
  t.Reboot("boot-b");
  FaultEvent init = t.Nvlink("kmsg:b1");
  init.id = MakeEventId("gpu-1", "kmsg", "kmsg:b1", "nvidia.rm-init-adapter-failed");
  init.rule = "nvidia.rm-init-adapter-failed";
  init.summary = "RmInitAdapter failed on 0000:3b:00.0";
  init.boot_id = "boot-b";
  t.Handle(init);
  CHECK(t.Condition("GPUFault").value("reason", "") == "ValidationFailed");
  CHECK(t.EventsWithReason("FaultlineValidationFailed").size() == 1);
  // Even a later passing round does not lift the new fault (no recover).
  t.Handle(t.Round("round:b1", "boot-b", true));
  t.f.clock.Advance(minutes(30));
  t.Settle();
  CHECK(t.Tainted());
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].rule == "nvidia.rm-init-adapter-failed");
}

TEST_CASE("the same fault after two reboots is marked for inspection and never lifted") {
  RecoveryFixture t;
  t.Handle(t.Xid79("kmsg:1"));
  t.f.clock.Advance(minutes(20));
  t.Reboot("boot-b");
  t.f.clock.Advance(minutes(3));
  t.Handle(t.Xid79("kmsg:b1", "boot-b"));  // survived one reboot
  CHECK(t.Reasons()[0].reboots == 1);
  CHECK_FALSE(t.Reasons()[0].inspection);
  CHECK(t.Label("faultline.dev/needs-inspection").empty());
  t.f.clock.Advance(minutes(20));
  t.Reboot("boot-c");
  t.f.clock.Advance(minutes(3));
  t.Handle(t.Xid79("kmsg:c1", "boot-c"));  // survived two
  REQUIRE(t.Reasons().size() == 1);
  CHECK(t.Reasons()[0].reboots == 2);
  CHECK(t.Reasons()[0].inspection);
  CHECK(t.Reasons()[0].recover.empty());
  CHECK(t.Label("faultline.dev/needs-inspection") == "true");
  CHECK(t.Condition("GPUFault").value("reason", "") == "NeedsInspection");
  const std::vector<json> inspect = t.EventsWithReason("FaultlineNeedsInspection");
  REQUIRE(inspect.size() == 1);
  const std::string message = inspect[0]["message"].get<std::string>();
  CHECK(message.find("survived 2 reboots") != std::string::npos);
  CHECK(message.find("rebooted boot: boot id boot-a -> boot-b") != std::string::npos);
  CHECK(message.find("rebooted boot: boot id boot-b -> boot-c") != std::string::npos);
  // A third reboot with a passing round and a long quiet: still out.
  t.Reboot("boot-d");
  t.Handle(t.Round("round:d1", "boot-d", true));
  t.f.clock.Advance(hours(6));
  t.Settle();
  CHECK(t.Tainted());
  CHECK(t.Condition("GPUFault").value("reason", "") == "NeedsInspection");
  // A person lifts it by hand: the label goes with the taint.
  REQUIRE(t.tainter->Untaint("gpu-1", "GPU replaced (RMA 1234)").ok());
  CHECK_FALSE(t.Tainted());
  CHECK(t.Label("faultline.dev/needs-inspection").empty());
  CHECK(t.History().back().how == "hand");
}

TEST_CASE("recovery.require_validation false: the boot id and the probation suffice") {
  RecoveryFixture t;
  Tainter::Options o = t.tainter->options();
  o.policy.require_validation = false;
  auto replaced = Tainter::Create(o, ApplierApis::All(t.f.Api()), t.f.metrics, t.f.clock);
  REQUIRE(replaced.ok());
  t.tainter = std::move(*replaced);
  REQUIRE(t.tainter->AdoptAll().ok());
  t.Handle(t.Xid79("kmsg:1"));
  t.Reboot("boot-b");
  t.Settle();
  CHECK(t.Condition("GPUFault")
            .value("message", "")
            .find("waits for: quiet for the probation after the reboot (checks not required)") !=
        std::string::npos);
  t.f.clock.Advance(minutes(10));
  t.Settle();
  CHECK_FALSE(t.Tainted());
  CHECK(t.History().back().detail.find("checks not required") != std::string::npos);
}

TEST_CASE("recovery config keys: probation, recurring_window, annotation") {
  Diagnostics diags;
  auto c = ParseTainterConfig(
      "kafka: {brokers: 'k:9092'}\n"
      "recovery: {probation: 2s, recurring_window: 1h, annotation: example.com/history,\n"
      "           require_validation: false, inspection_after_reboots: 3}\n",
      "t.yaml", diags, true);
  REQUIRE(c);
  CHECK_FALSE(c->tainter.policy.require_validation);
  CHECK(c->tainter.policy.inspection_after_reboots == 3);
  CHECK(c->tainter.policy.probation == seconds(2));
  CHECK(c->tainter.policy.recurring_window == hours(1));
  CHECK(c->tainter.history_annotation_key == "example.com/history");
  Diagnostics bad;
  CHECK_FALSE(
      ParseTainterConfig("kafka: {brokers: 'k:9092'}\nrecovery: {annotation: "
                         "faultline.dev/reasons}\n",
                         "t.yaml", bad, true));
}

}  // namespace
}  // namespace faultline
