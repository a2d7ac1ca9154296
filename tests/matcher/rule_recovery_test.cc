// SPDX-License-Identifier: Apache-2.0
// `recover:`, `probation:` and `clear:` in a rule pack: how a rule's fault
// ends (tainter/core/recovery.h), carried in the FaultEvent; E116 for a bad
// recover or probation, E117 for a bad clear.
#include <doctest/doctest.h>

#include "base/fault_event.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

TEST_CASE("recover, probation and clear are read and carried in the event") {
  Loaded l = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
rules:
  - id: a.xid
    pattern: 'Xid (?P<xid>\d+)'
    action: taint
    recover: reboot
    probation: 15m
  - id: b.fabric-ok
    pattern: 'fabric ok'
    clear: [a.xid, c.other]
  - id: c.other
    pattern: 'other'
    action: taint
    clear: a.xid
)");
  // c.other taints and clears: E117 (a clear rule cannot taint).
  CHECK(l.Where("E117") == Strings{"17:12"});
  CHECK(l.Message("E117").find("cannot taint") != std::string::npos);
}

TEST_CASE("a valid recovery pack loads, and the event JSON round-trips the keys") {
  Loaded l = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
rules:
  - id: a.xid
    pattern: 'Xid (?P<xid>\d+)'
    action: taint
    recover: reboot
    probation: 15m
  - id: b.fabric-ok
    pattern: 'fabric ok'
    clear: [a.xid]
  - id: c.single
    pattern: 'single ok'
    clear: a.xid
)");
  REQUIRE(l.set);
  CHECK_FALSE(l.diags.has_errors());
  std::vector<RuleMatch> m = MatchLine(*l.set, "Xid 79", Origin::kKernel);
  REQUIRE(m.size() == 1);
  FaultEvent e = MakeFaultEvent(m[0], LogRecord{}, "gpu-1", "boot-a", {});
  CHECK(e.recover == "reboot");
  REQUIRE(e.probation);
  CHECK(*e.probation == std::chrono::minutes(15));
  CHECK(e.clears.empty());
  Result<FaultEvent> back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back.ok());
  CHECK(back->recover == "reboot");
  CHECK(back->probation == e.probation);

  m = MatchLine(*l.set, "fabric ok", Origin::kKernel);
  REQUIRE(m.size() == 1);
  e = MakeFaultEvent(m[0], LogRecord{}, "gpu-1", "boot-a", {});
  CHECK(e.clears == Strings{"a.xid"});
  CHECK(e.recover.empty());
  back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back.ok());
  CHECK(back->clears == Strings{"a.xid"});
  m = MatchLine(*l.set, "single ok", Origin::kKernel);
  REQUIRE(m.size() == 1);
  CHECK(m[0].rule->clears == Strings{"a.xid"});

  // Without the keys, the event JSON has none of them.
  FaultEvent plain;
  plain.id = "0123456789abcdef0123456789abcdef";
  plain.node = "gpu-1";
  plain.rule = "r";
  CHECK_FALSE(ToJson(plain).contains("recover"));
  CHECK_FALSE(ToJson(plain).contains("probation"));
  CHECK_FALSE(ToJson(plain).contains("clears"));
}

TEST_CASE("a classify outcome's recover applies to its value only") {
  Loaded l = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
rules:
  - id: a.xid
    pattern: 'Xid (?P<xid>\d+)'
    action: taint
    classify:
      capture: xid
      values:
        "79": {recover: reboot}
        "48": {summary: 'double bit'}
)");
  REQUIRE(l.set);
  CHECK_FALSE(l.diags.has_errors());
  const auto recover_of = [&](const std::string& line) {
    std::vector<RuleMatch> m = MatchLine(*l.set, line, Origin::kKernel);
    REQUIRE(m.size() == 1);
    FaultEvent e = MakeFaultEvent(m[0], LogRecord{}, "gpu-1", "boot-a", {});
    Result<FaultEvent> back = ParseFaultEvent(SerializeFaultEvent(e));
    REQUIRE(back.ok());
    CHECK(back->recover == e.recover);
    return e.recover;
  };
  CHECK(recover_of("Xid 79") == "reboot");
  CHECK(recover_of("Xid 48").empty());
  CHECK(recover_of("Xid 31").empty());

  Loaded bad = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
rules:
  - id: a.xid
    pattern: 'Xid (?P<xid>\d+)'
    classify:
      capture: xid
      values:
        "13": {recover: power-cycle}
)");
  CHECK(bad.Where("E116") == Strings{"11:25"});
}

TEST_CASE("E116 and E117: bad recover, probation without recover, bad clear") {
  Loaded l = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
rules:
  - id: a
    pattern: 'a'
    recover: power-cycle
  - id: b
    pattern: 'b'
    probation: 10m
  - id: c
    pattern: 'c'
    clear: [Bad.Id]
  - id: d
    pattern: 'd'
    clear: d
  - id: e
    pattern: 'e'
    clear: []
)");
  CHECK(l.Where("E116") == Strings{"8:14", "11:16"});
  CHECK(l.Message("E116").find("the one way is 'reboot'") != std::string::npos);
  CHECK(l.Where("E117") == Strings{"14:13", "17:12", "20:12"});
}

}  // namespace
}  // namespace faultline
