// SPDX-License-Identifier: Apache-2.0
// Literal sets that spell out the small choices inside a pattern: a class
// of a few characters ("[Uu]p"), an alternation of words ("(?:nvme|sd)"),
// an optional word ("(?:is )?"), joined with the literal text around them
// ("Link is Up", "Link Up", ...). The plain extractor (literal_prefilter.h)
// stops a literal at each such choice, so a rule like
// `Link (?:is )?[Uu]p` is left with "Link ", which "NVLink traffic" holds
// too: every such line went through input parsing and RE2. A line that holds
// none of an expanded set cannot match, so these sets confirm a prefilter
// hit cheaply (rule_scan.cc); they never choose what Vectorscan searches for.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// Sets of literals of which every match of the RE2 `pattern` contains at
// least one, each made by joining literal text with at least one small
// choice (at most 20 literals a set, each at least 4 bytes, none holding
// another; at most two sets, the longest shortest-literal first). Empty when the pattern has no
// such choice next to literal text, or is not syntax the reader knows.
// Literals never hold ':' or a newline, as ExtractRequiredLiterals'.
// `min_bytes` is the shortest literal a set may hold: 4 for a set that
// confirms a hit (".0 " stops too few lines to pay for its search); 3 for
// one searched for instead of running the regex on every line (`E(?:CC|DAC)`).
std::vector<std::vector<RequiredLiteral>> ExtractExpandedLiteralSets(std::string_view pattern,
                                                                     std::size_t min_bytes = 4);

// An expanded set ready to search a line with: its literals mostly share a
// head ("I/O error, dev ") or a tail (" uncorrectable errors"), so one
// memmem of that part and a compare of each literal's rest there is much
// cheaper than one memmem per literal.
struct ExpandedSet {
  std::vector<RequiredLiteral> literals;
  std::string common;  // shared by every literal (case-sensitive); empty: none worth it
  bool common_is_tail = false;
};
ExpandedSet MakeExpandedSet(std::vector<RequiredLiteral> literals);

// True if `line` holds one of `set.literals` (LineHasLiteral for any).
bool LineHasOneOf(std::string_view line, const ExpandedSet& set);

}  // namespace faultline
