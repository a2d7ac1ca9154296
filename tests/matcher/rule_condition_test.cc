// SPDX-License-Identifier: Apache-2.0
// `condition:` in a rule pack: the NodeCondition type a rule's fault sets on
// the node (tainter/core/conditions.h), from defaults, the rule or a classify
// outcome, carried in the FaultEvent; E115 for a type faultline must not write.
#include <doctest/doctest.h>

#include "base/fault_event.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

TEST_CASE("condition: from defaults, overridden by the rule and by a classify outcome") {
  Loaded l = LoadPack(R"(pack: x
version: 1
defaults:
  sources: [kernel]
  condition: HostFault
rules:
  - id: a.pcie
    pattern: 'AER: (?P<kind>\w+)'
    action: taint
  - id: b.xid
    pattern: 'Xid (?P<xid>\d+)'
    condition: GPUFault
    action: taint
    classify:
      capture: xid
      values:
        "74": {condition: GPUInterconnectFault}
      default: {}
)");
  REQUIRE(l.set);
  CHECK_FALSE(l.diags.has_errors());  // W201 (no embedded tests) is a warning
  std::vector<RuleMatch> m = MatchLine(*l.set, "AER: fatal", Origin::kKernel);
  REQUIRE(m.size() == 1);
  CHECK(m[0].condition == "HostFault");
  m = MatchLine(*l.set, "Xid 79", Origin::kKernel);
  REQUIRE(m.size() == 1);
  CHECK(m[0].condition == "GPUFault");
  m = MatchLine(*l.set, "Xid 74", Origin::kKernel);
  REQUIRE(m.size() == 1);
  CHECK(m[0].condition == "GPUInterconnectFault");
}

TEST_CASE("E115: a condition type that is not CamelCase, or the kubelet's own, is refused") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'x'
    condition: gpu-fault
  - id: b
    sources: [kernel]
    pattern: 'y'
    condition: Ready
)");
  CHECK(l.Where("E115") == Strings{"7:16", "11:16"});
  CHECK(l.Message("E115").find("CamelCase") != std::string::npos);
}

TEST_CASE("the event carries `condition` in its JSON only when the rule sets one") {
  FaultEvent e;
  e.id = "0123456789abcdef0123456789abcdef";
  e.node = "gpu-1";
  e.rule = "nvidia.xid";
  CHECK_FALSE(ToJson(e).contains("condition"));
  e.condition = "GPUInterconnectFault";
  Result<FaultEvent> back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back.ok());
  CHECK(back->condition == "GPUInterconnectFault");
}

}  // namespace
}  // namespace faultline
