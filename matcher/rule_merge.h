// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "base/diagnostics.h"
#include "matcher/rule.h"
#include "matcher/rule_pack.h"

namespace faultline {

// Merges packs in load order into one list of rules:
//  - a repeated pack name or rule id is E103, reported at both places;
//  - a rule with `override: true` changes the earlier rule with its id: the
//    keys it writes replace the earlier ones, except classify.values, which
//    merge entry by entry (an entry for "63" takes 63 out of an earlier
//    "13,63" list); `disabled: true` switches the rule off;
//  - an override of an id no earlier pack defines is E110;
//  - an override that writes more than `disabled` and `description` clears
//    the rule's checked_at_build (rule.h).
// The result keeps the earlier rule's place and pack. Never throws.
std::vector<Rule> MergeRulePacks(std::vector<RulePack> packs, Diagnostics& diags);

}  // namespace faultline
