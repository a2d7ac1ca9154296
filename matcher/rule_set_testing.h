// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into RuleSet: not part of the matcher's interface.
#pragma once

#include "matcher/rule_set.h"

namespace faultline {

struct RuleSetTesting {
  // From now on `set` treats every RE2::Set match as out of memory, to prove
  // the one-by-one fallback (Debian's RE2 rarely runs out in a real Set
  // match, because Set::Compile already refuses a DFA that cannot start).
  static void SimulateDfaOutOfMemory(const RuleSet& set);
};

}  // namespace faultline
