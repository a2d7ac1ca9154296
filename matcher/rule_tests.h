// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

#include "base/diagnostics.h"
#include "matcher/rule_set.h"

namespace faultline {

struct RuleTestCounts {
  std::size_t run = 0;
  std::size_t failed = 0;
};

// Runs every embedded test of every enabled rule in `set` against the set
// itself (so overrides and classification apply as in production). Each
// failure is an error at the test's line: T001 a match line did not match,
// T002 a capture differed, T003 a no_match line matched, T004 the resolved
// action or severity differed. A test line is matched as the test's origin,
// else as the rule's first source.
RuleTestCounts RunRuleTests(const RuleSet& set, Diagnostics& diags);

}  // namespace faultline
