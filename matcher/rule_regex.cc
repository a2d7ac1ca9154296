// SPDX-License-Identifier: Apache-2.0
#include "matcher/rule_regex.h"

#include <algorithm>

namespace faultline {
namespace {

RE2::Options RuleOptions(std::int64_t max_mem) {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(max_mem);
  return o;
}

void ReadGroups(RuleRegexParts& parts) {
  for (const auto& [group, name] : parts.re->CapturingGroupNames()) {
    parts.named.emplace_back(group, name);
    parts.capture_groups = std::max(parts.capture_groups, group + 1);
  }
  // By name, the order of RuleMatch::fields (the matcher appends at its end).
  std::sort(parts.named.begin(), parts.named.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
}

}  // namespace

std::unique_ptr<RE2> CompileRuleRegex(const std::string& pattern, const RegexBudget& budget) {
  if (budget.rule_max_memory_bytes > 0 && budget.rule_max_memory_bytes < budget.max_memory_bytes) {
    // A pattern that compiles in less memory compiles in more: the larger
    // budget is compiled only when the smaller fails (the agent's options
    // compiled every rule twice).
    auto re = std::make_unique<RE2>(pattern, RuleOptions(budget.rule_max_memory_bytes));
    if (re->ok()) return re;
  }
  return std::make_unique<RE2>(pattern, RuleOptions(budget.max_memory_bytes));
}

RuleRegex::RuleRegex(std::unique_ptr<RE2> re) {
  parts_.re = std::move(re);
  ReadGroups(parts_);
  ready_.store(true, std::memory_order_release);
}

RuleRegex::RuleRegex(const std::string& pattern, RegexBudget budget)
    : pattern_(&pattern), budget_(budget) {}

void RuleRegex::Build() const {
  std::call_once(once_, [this] {
    parts_.re = CompileRuleRegex(*pattern_, budget_);
    // The build compiled this pattern at these limits or smaller ones, so
    // it compiles here; were it not to, ReadGroups finds no groups and the
    // rule matches nothing (RE2 answers false for a regex that is not ok).
    ReadGroups(parts_);
    ready_.store(true, std::memory_order_release);
  });
}

}  // namespace faultline
