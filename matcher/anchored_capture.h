// SPDX-License-Identifier: Apache-2.0
// Finds a rule's match and its groups without RE2's reverse DFA, for rules
// whose every match begins with a known literal.
//
// RE2::Match(UNANCHORED) with submatches runs a forward DFA to find where
// the match ends, then a reverse DFA to find where it starts, then a
// submatch engine. On subset-a's patterns (bench/sets) a matching line cost
// 267 ns with no submatches, 852 ns with the span alone (the reverse pass)
// and 1,044 ns with every group: the reverse pass cost more than all else.
// When every match begins with one of a few literals, the leftmost match
// starts where one of them occurs, and the first such position p where
// Match(text, p, size, ANCHOR_START) succeeds is that match, groups and all
// (an anchored leftmost-first match is what the unanchored search picks at
// its leftmost start). On a line of ordinary length RE2 runs OnePass or
// BitState there, no DFA at all, and it keeps the text before p as context
// for \b and ^.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

namespace faultline {

// A literal that a match may begin with: bytes, compared exactly or, when
// `caseless`, with ASCII letters in either case.
struct LeadingLiteral {
  std::string text;
  bool caseless = false;
};

// Literals such that every match of the RE2 pattern `pattern` begins with
// one of them, or none when the pattern's tree (re2_syntax.h) does not
// prove it. Conservative: a class, a repeated or optional item, ^, $, a
// non-ASCII character, a caseless k or s (RE2 folds them with U+212A and
// U+017F), a change between exact and caseless letters, or more than
// kMaxLeadingLiterals alternatives end the literals there; an alternation
// whose branch proves no literal, or a first item that is none, leaves
// none. \b and \B are skipped (they consume nothing).
inline constexpr std::size_t kMaxLeadingLiterals = 8;
std::vector<LeadingLiteral> LeadingLiterals(std::string_view pattern);

// RE2's unanchored match of `re` in `text` (as
// re.Match(text, 0, text.size(), RE2::UNANCHORED, groups, n) returns it),
// found by trying RE2::ANCHOR_START at each position where one of `leads`
// occurs, in order. `leads` must be LeadingLiterals(re.pattern()), or
// others that every match of `re` begins with; otherwise the result may
// differ. No literals (or more than kMaxLeadingLiterals), or more than
// kMaxAnchoredAttempts occurrences that do not match: RE2's unanchored
// search itself (so that a hostile line costs at most a few passes over
// it). `groups` holds n entries (n >= 1), as for RE2::Match.
inline constexpr std::size_t kMaxAnchoredAttempts = 4;
bool MatchAtLeadingLiterals(const RE2& re, const std::vector<LeadingLiteral>& leads,
                            std::string_view text, re2::StringPiece* groups, int n);

// A rule's match with its groups, found by MatchAtLeadingLiterals at the
// pattern's LeadingLiterals, read from the pattern on the first Match: the
// parse costs ~38,000 instructions a pattern, which at compile time was a
// tenth of a start with the built-in packs, for rules most scans never
// match. Thread-safe; not copyable.
class AnchoredCapture {
 public:
  // Matches `re` (whose pattern the literals are read from) on `text`: as
  // re.Match(text, 0, text.size(), RE2::UNANCHORED, groups, n).
  bool Match(const RE2& re, std::string_view text, re2::StringPiece* groups, int n) const;

 private:
  mutable std::once_flag once_;
  mutable std::vector<LeadingLiteral> leads_;
};

}  // namespace faultline
