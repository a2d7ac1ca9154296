// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "matcher/rule.h"

namespace faultline {

// The outcome for `value` in `c`: an exact entry ("79", or one item of a
// comma list "13,31,43") first, then the first numeric range ("144-150")
// holding it, else the default. `value` is nullopt when the capture did not
// take part in the match: the default applies. Never null.
const Outcome* Classify(const Classification& c, std::optional<std::string_view> value);

// Fills `m`'s category, severity, action, summary, threshold and expire from
// the rule, then its classification entry, then a nested classification's
// entry, and interpolates the summary with `m.fields`.
void ResolveOutcome(const Rule& rule, RuleMatch& m);

// ResolveOutcome without the interpolation: `m.summary` is the template
// that applies to this match (for `rules check`'s W203).
void ResolveOutcomeTemplate(const Rule& rule, RuleMatch& m);

// "Xid {xid} on {pci}" with {name} replaced by the capture's value (empty if
// it did not take part); "{{" and "}}" are literal braces. "{?TEXT}" is an
// optional section: TEXT (which may hold {name}s and sections) is kept only
// when one of its captures has a value, so "GPU reset failed{? ({err})}"
// reads "GPU reset failed" for a line without the error, not "failed ()".
// A section without a capture is never printed.
std::string InterpolateSummary(std::string_view summary,
                               const std::map<std::string, std::string>& fields);

// The captures `summary` would print empty for `fields` (outside optional
// sections that are left out), for `rules check`'s W203.
std::vector<std::string> EmptySummaryCaptures(std::string_view summary,
                                              const std::map<std::string, std::string>& fields);

// The capture names a summary refers to, for the E105 check.
std::vector<std::string> SummaryCaptures(std::string_view summary);

// Splits a classify value key into its comma-separated, trimmed items.
std::vector<std::string> SplitValueKey(std::string_view key);

}  // namespace faultline
