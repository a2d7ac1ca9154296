// SPDX-License-Identifier: Apache-2.0
// The agent compiles rules with a bounded RE2 max_mem per rule
// (AgentCompileOptions): the bound must change memory, never matches.
#include <sstream>

#include <doctest/doctest.h>

#include "collector/agent/agent_stack.h"
#include "matcher/rule_set.h"
#include "matcher/rule_tests.h"

namespace faultline {
namespace {

std::shared_ptr<const RuleSet> CompileBuiltin(const CompileOptions& options) {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules(RuleSources{}, options, diags, texts);
  std::ostringstream printed;
  diags.Print(printed, texts);
  INFO(printed.str());
  REQUIRE(set != nullptr);
  return set;
}

void CheckEveryRuleTestPasses(const CompileOptions& options) {
  std::shared_ptr<const RuleSet> bounded = CompileBuiltin(options);
  std::shared_ptr<const RuleSet> unbounded = CompileBuiltin(CompileOptions{});
  CHECK(bounded->size() == unbounded->size());  // the bound never rejects a rule
  Diagnostics diags;
  const RuleTestCounts counts = RunRuleTests(*bounded, diags);
  std::ostringstream printed;
  diags.Print(printed, {});
  INFO(printed.str());
  CHECK(counts.run > 100);
  CHECK(counts.failed == 0);
}

TEST_CASE("agent compile options: every built-in rule's embedded tests pass under them") {
  REQUIRE(AgentCompileOptions().rule_max_memory_bytes > 0);
  REQUIRE(AgentCompileOptions().rule_max_memory_bytes < CompileOptions{}.max_memory_bytes);
  CheckEveryRuleTestPasses(AgentCompileOptions());
}

TEST_CASE("a per-rule budget too small for any DFA keeps matches: RE2 falls back to its NFA") {
  CompileOptions tiny;
  // Enough to compile small rules (larger ones keep max_memory_bytes), far
  // too little for their DFAs' 20-state minimum: every search is the NFA's.
  tiny.rule_max_memory_bytes = 12 << 10;
  CheckEveryRuleTestPasses(tiny);
}

}  // namespace
}  // namespace faultline
