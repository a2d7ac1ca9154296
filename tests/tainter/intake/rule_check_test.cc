// SPDX-License-Identifier: Apache-2.0
// The tainter's check of each event against its rule (issue 11, defect 7):
// what the tainter does comes from the rule packs, never from the event.
#include "tainter/intake/rule_check.h"

#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "base/metrics.h"
#include "tainter/apply/tainter_metrics.h"
#include "tainter/daemon/tainter_config.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::shared_ptr<const RuleSet> Builtin() {
  static std::shared_ptr<const RuleSet> rules = [] {
    std::ostringstream err;
    auto r = LoadRulePacks({}, err);
    REQUIRE_MESSAGE(r != nullptr, err.str());
    return r;
  }();
  return rules;
}

// The event an agent on the built-in packs publishes for `line`: the
// matcher's own match and event builder (matcher/rule_set.h).
FaultEvent Genuine(const std::string& line, Origin origin = Origin::kKernel, Labels labels = {}) {
  LogRecord record{.source = "kmsg",
                   .origin = origin,
                   .text = line,
                   .time = std::chrono::system_clock::now(),
                   .cursor = "c1",
                   .labels = std::move(labels)};
  std::vector<RuleMatch> matches;
  Builtin()->Match(record, matches);
  REQUIRE(matches.size() == 1);
  return MakeFaultEvent(matches[0], record, "gpu-1", "boot", record.time);
}

const std::string kXid79 =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.";
const std::string kXid13 =
    "NVRM: Xid (PCI:0000:3b:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)";

TEST_CASE("rule check: an agent's genuine events pass unchanged") {
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kSetAside);
  for (const std::string& line : {kXid79, kXid13}) {
    FaultEvent e = Genuine(line);
    const FaultEvent before = e;
    RuleCheck::Verdict v = check.Check(e);
    CHECK_MESSAGE(v.ok(), v.detail);
    CHECK(v.detail.empty());
    CHECK(e.action == before.action);
    CHECK(e.summary == before.summary);
    CHECK(e.expire == before.expire);
    CHECK(e.threshold == before.threshold);
  }
  FaultEvent xid79 = Genuine(kXid79);
  CHECK(xid79.action == Action::kTaint);  // the classification, recomputed from the capture
}

TEST_CASE("rule check: a forged taint for an event-only outcome is a rule_mismatch") {
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kSetAside);
  FaultEvent e = Genuine(kXid13);
  REQUIRE(e.action == Action::kEvent);
  e.action = Action::kTaint;
  e.severity = Severity::kCritical;
  RuleCheck::Verdict v = check.Check(e);
  CHECK(v.set_aside == "rule_mismatch");
  CHECK(v.mismatch);
  CHECK(v.detail == "action 'taint' but rule 'nvidia.xid' says 'event'");
}

TEST_CASE("rule check: a forged capture is classified as the rule says, not as claimed") {
  // Claims Xid 79's outcome while the captured code is 13: the rule's
  // classification of the capture decides, and the claim contradicts it.
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kSetAside);
  FaultEvent forged = Genuine(kXid79);
  forged.fields["xid"] = "13";
  CHECK(check.Check(forged).set_aside == "rule_mismatch");
}

// The node condition and the blamed peer decide writes too (a condition on
// nodes/status, an accusation of another node): both come from the rule.
TEST_CASE("rule check: a forged condition or peer is a rule_mismatch") {
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kSetAside);
  const std::string genuine_condition = Genuine(kXid79).condition;
  FaultEvent condition = Genuine(kXid79);
  condition.condition = genuine_condition == "NetworkFault" ? "HostFault" : "NetworkFault";
  CHECK(check.Check(condition).set_aside == "rule_mismatch");
  FaultEvent peer = Genuine(kXid79);  // nvidia.xid names no peer
  peer.peer = "10.0.4.17";
  CHECK(check.Check(peer).set_aside == "rule_mismatch");
  RuleCheck by_rule(Builtin(), RuleCheck::OnMismatch::kDecideByRule);
  FaultEvent decided = Genuine(kXid79);
  decided.peer = "10.0.4.17";
  decided.condition = genuine_condition == "HostFault" ? "NetworkFault" : "HostFault";
  CHECK(by_rule.Check(decided).set_aside.empty());
  CHECK(decided.peer.empty());
  CHECK(decided.condition == genuine_condition);
}

TEST_CASE("rule check: an unknown or disabled rule id is unknown_rule") {
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kSetAside);
  FaultEvent e = Genuine(kXid79);
  e.rule = "site.no-such-rule";
  RuleCheck::Verdict v = check.Check(e);
  CHECK(v.set_aside == "unknown_rule");
  CHECK_FALSE(v.mismatch);
  CHECK(v.detail.find("site.no-such-rule") != std::string::npos);

  TempDir dir;
  const std::string pack =
      dir.Write("off.yaml",
                "pack: off\nversion: 1\nrules:\n"
                "  - id: nvidia.xid\n    override: true\n    disabled: true\n");
  std::ostringstream err;
  auto rules = LoadRulePacks({.builtin = true, .paths = {pack}}, err);
  REQUIRE_MESSAGE(rules != nullptr, err.str());
  RuleCheck off(rules, RuleCheck::OnMismatch::kSetAside);
  FaultEvent x = Genuine(kXid79);
  CHECK(off.Check(x).set_aside == "unknown_rule");
}

TEST_CASE(
    "rule check: forged expire and threshold are mismatches, and decide_by_rule uses the rule's") {
  const std::string line = "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down";
  const FaultEvent genuine = Genuine(line);
  REQUIRE(genuine.rule == "net.netdev-link-down");
  REQUIRE(genuine.threshold.has_value());
  REQUIRE(genuine.expire == std::chrono::hours(24));

  RuleCheck strict(Builtin(), RuleCheck::OnMismatch::kSetAside);
  FaultEvent expire = genuine;
  expire.expire.reset();  // "never expires": a permanent taint
  CHECK(strict.Check(expire).detail == "expire 'never' but rule 'net.netdev-link-down' says '1d'");
  FaultEvent threshold = genuine;
  threshold.threshold.reset();  // one event is enough
  RuleCheck::Verdict tv = strict.Check(threshold);
  CHECK(tv.set_aside == "rule_mismatch");
  CHECK(tv.detail ==
        "threshold 'none' but rule 'net.netdev-link-down' says '5 in 1d by pci,netdev'");

  // The operator's choice for rolling upgrades: decided by the tainter's
  // copy of the rule, whatever the event claimed, and still reported.
  RuleCheck by_rule(Builtin(), RuleCheck::OnMismatch::kDecideByRule);
  threshold.expire = std::chrono::seconds(1);
  threshold.action = Action::kTaint;
  threshold.summary = "whatever the producer says";
  RuleCheck::Verdict v = by_rule.Check(threshold);
  CHECK(v.ok());
  CHECK(v.mismatch);
  CHECK_FALSE(v.detail.empty());
  CHECK(threshold.threshold == genuine.threshold);
  CHECK(threshold.expire == genuine.expire);
  CHECK(threshold.summary == genuine.summary);
}

TEST_CASE("rule check: an origin the rule does not trust, or journal labels it refuses") {
  RuleCheck check(Builtin(), RuleCheck::OnMismatch::kDecideByRule);
  FaultEvent pod = Genuine(kXid79);
  pod.origin = Origin::kPod;  // a pod printing an Xid line never matches nvidia.xid
  CHECK(check.Check(pod).set_aside == "rule_mismatch");

  const std::string line =
      "nv-hostengine[4021]: DCGM health: GPU 3 had uncorrectable memory errors and row remapping "
      "failed.";
  FaultEvent dcgm =
      Genuine(line, Origin::kJournal, {{"unit", "nvidia-dcgm.service"}, {"uid", "0"}});
  FaultEvent copy = dcgm;
  CHECK(check.Check(copy).ok());
  dcgm.labels = {{"unit", "session-3.scope"}, {"uid", "1000"}};  // `logger` by a local user
  CHECK(check.Check(dcgm).set_aside == "rule_mismatch");
}

TEST_CASE("tainter metrics: decision, set-aside and lift counters exist at 0 from the start") {
  MetricsRegistry registry;
  TainterMetrics metrics(registry);
  const std::string text = registry.RenderPrometheus();
  for (const char* series : {
           R"(faultline_tainter_decisions_total{outcome="taint"} 0)",
           R"(faultline_tainter_decisions_total{outcome="refused_by_valve"} 0)",
           R"(faultline_tainter_decisions_total{outcome="unknown_node"} 0)",
           R"(faultline_tainter_events_set_aside_total{why="key_mismatch"} 0)",
           R"(faultline_tainter_events_set_aside_total{why="unknown_rule"} 0)",
           R"(faultline_tainter_events_set_aside_total{why="rule_mismatch"} 0)",
           R"(faultline_tainter_taints_lifted_total{why="expired"} 0)",
           "faultline_tainter_rule_mismatches_total 0",
           "faultline_tainter_dead_lettered_total 0",
       }) {
    CAPTURE(series);
    CHECK(text.find(std::string("\n") + series + "\n") != std::string::npos);
  }
}

TEST_CASE("tainter config: rules key as the agent's, on_mismatch strict by default") {
  Result<TainterConfig> d = ParseTainterConfig("", "t.yaml");
  REQUIRE(d.ok());
  CHECK(d->rules.builtin);
  CHECK(d->rules.paths.empty());
  CHECK(d->on_mismatch == RuleCheck::OnMismatch::kSetAside);
  Result<TainterConfig> c = ParseTainterConfig(
      "rules: {builtin: false, paths: [/etc/faultline/rules], on_mismatch: decide_by_rule}\n",
      "t.yaml");
  REQUIRE(c.ok());
  CHECK_FALSE(c->rules.builtin);
  CHECK(c->rules.paths == std::vector<std::string>{"/etc/faultline/rules"});
  CHECK(c->on_mismatch == RuleCheck::OnMismatch::kDecideByRule);
  Result<TainterConfig> bad = ParseTainterConfig("rules: {on_mismatch: trust}\n", "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("t.yaml:1:22: error: 'rules.on_mismatch' must be set_aside") !=
        std::string::npos);
}

std::pair<int, std::string> RunCommand(const std::string& command) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_CASE("faultline-tainter: a broken rule pack is a file:line:col error at start (exit 2)") {
  TempDir dir;
  const std::string pack = dir.Write("rules/bad.yaml",
                                     "pack: bad\nversion: 1\nrules:\n  - id: x.y\n"
                                     "    pattern: 'a('\n    action: taint\n");
  const std::string config = dir.Write(
      "t.yaml", "kafka: {brokers: 127.0.0.1:1}\nrules: {paths: [" + dir / "rules" + "]}\n");
  auto [code, out] =
      RunCommand(std::string(FL_BINARY_DIR) + "/tainter/faultline-tainter --config " + config);
  CHECK(code == 2);
  const std::string& printed = out;  // clang 14 cannot capture a structured binding (doctest)
  CHECK_MESSAGE(printed.find(pack + ":5:") != std::string::npos, printed);
  CHECK(out.find("error:") != std::string::npos);
}

TEST_CASE("faultline-tainter --version lists the rule packs it checks events against") {
  auto [code, out] =
      RunCommand(std::string(FL_BINARY_DIR) + "/tainter/faultline-tainter --version");
  CHECK(code == 0);
  CHECK(out.find("rule pack nvidia-xid: ") != std::string::npos);
  CHECK(out.find("librdkafka: ") != std::string::npos);
}

}  // namespace
}  // namespace faultline
