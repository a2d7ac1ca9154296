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

#include <atomic>
#include <cstddef>
#include <cstdint>
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
// prove it. Conservative: a class, a repeat after its first item, ^, $, a
// non-ASCII character, a caseless k or s (RE2 folds them with U+212A and
// U+017F), or a change between exact and caseless letters ends a literal
// there; in an alternation each branch ends only its own (`(?:amdgpu
// <pci>: |\b)ring` begins with "amdgpu " or "ring "), and an optional item
// is itself or nothing (`(?:GPU\d+ )?RmInit` begins with "GPU" or
// "RmInit") unless that makes more than kMaxLeadingLiterals. A branch or
// first item with no literal at all leaves none. \b and \B are skipped
// (they consume nothing). A literal that begins with another is dropped.
inline constexpr std::size_t kMaxLeadingLiterals = 8;
std::vector<LeadingLiteral> LeadingLiterals(std::string_view pattern);

// How MatchAtLeadingLiterals asks RE2 at an occurrence p of a literal. Each
// gives RE2's unanchored match and groups; they differ only in cost.
// RE2::Match(ANCHOR_START) with groups skips RE2's DFA and runs BitState
// (or OnePass) over all of text[p..], which for a greedy `.*` means to the
// end of the line and back; a DFA pass is ~1,000 instructions whatever the
// line, BitState ~40-100 a byte it visits (callgrind, user-gpu's rules).
enum class ConfirmOrder : std::uint8_t {
  // RE2::Match(ANCHOR_START) with the groups.
  kGroupsAtOnce,
  // The match's extent first (one group: the forward DFA alone), then the
  // groups with ANCHOR_BOTH on just that span: BitState no longer walks the
  // text past the match (a greedy `.*` before more pattern).
  kSpanFirst,
  // A DFA-only yes/no (unanchored, from the first occurrence) before
  // kGroupsAtOnce: a line without a match costs one DFA pass, not BitState
  // at each occurrence (`Xid.*?: ` where no ": N," follows).
  kRejectFirst,
};

// RE2's unanchored match of `re` in `text` (as
// re.Match(text, 0, text.size(), RE2::UNANCHORED, groups, n) returns it),
// found by trying RE2::ANCHOR_START at each position where one of `leads`
// occurs, in order, asked as `order` says. `leads` must be
// LeadingLiterals(re.pattern()), or others that every match of `re`
// begins with; otherwise the result may differ. No literals (or more than
// kMaxLeadingLiterals), or more than kMaxAnchoredAttempts occurrences that
// do not match: RE2's unanchored search itself (so that a hostile line
// costs at most a few passes over it). `groups` holds n entries (n >= 1),
// as for RE2::Match.
inline constexpr std::size_t kMaxAnchoredAttempts = 4;
bool MatchAtLeadingLiterals(const RE2& re, const std::vector<LeadingLiteral>& leads,
                            std::string_view text, re2::StringPiece* groups, int n,
                            ConfirmOrder order = ConfirmOrder::kGroupsAtOnce);

// Literals such that the RE2 pattern `pattern` matches a text exactly when
// one of them occurs in it (`CrashLoopBackOff|ImagePullBackOff`,
// `NCCL (WARN|ERROR)`), or none when the pattern's tree does not prove it:
// LeadingLiterals that take in the whole pattern, with no \b or \B.
std::vector<LeadingLiteral> WholeLiterals(std::string_view pattern);

// What a pattern's shape says about the cost of confirming it: a `.*`,
// `.+` or `[^\n]*` (a "wildcard" repeat) lets BitState run along the line.
struct ConfirmShape {
  // A greedy wildcard repeat with more pattern after it: kSpanFirst.
  bool greedy_wildcard_inside = false;
  // Any wildcard repeat: a line whose occurrences do not match may cost
  // BitState the rest of the line at each, so kRejectFirst pays when most
  // candidate lines fail (AnchoredCapture counts them).
  bool wildcard = false;
};
ConfirmShape ConfirmShapeOf(std::string_view pattern);

// A rule's match with its groups, found by MatchAtLeadingLiterals at the
// pattern's LeadingLiterals, read from the pattern on the first Match: the
// parse costs ~38,000 instructions a pattern, which at compile time was a
// tenth of a start with the built-in packs, for rules most scans never
// match. The order is kSpanFirst for a greedy wildcard inside the pattern;
// for another wildcard, kRejectFirst while fewer than half of the lines it
// was asked about matched (counted per rule, from kMinCountedLines on),
// else kGroupsAtOnce. Thread-safe (the counts are a hint: a lost update
// changes only the cost); not copyable.
class AnchoredCapture {
 public:
  // Matches `re` (whose pattern the literals are read from) on `text`: as
  // re.Match(text, 0, text.size(), RE2::UNANCHORED, groups, n).
  bool Match(const RE2& re, std::string_view text, re2::StringPiece* groups, int n) const;

  // Whether `re` matches `text` anywhere (not for an AnchoredCapture that
  // Match is called on): by FindLiteral for its WholeLiterals when it is
  // nothing but them (SSE2, where RE2's DFA steps through every byte),
  // else RE2's DFA alone.
  bool Matches(const RE2& re, std::string_view text) const;

  // The order the next Match asks RE2 in (after the first Match).
  ConfirmOrder NextOrder() const;

  static constexpr std::uint32_t kMinCountedLines = 16;

 private:
  // Reads from re's pattern, once, what the calls use: the leading
  // literals and the shape for Match (`groups`), the whole literals for
  // Matches. One AnchoredCapture serves one of the two.
  void Init(const RE2& re, bool groups) const;
  void Count(bool matched) const;

  mutable std::atomic<bool> ready_{false};
  mutable std::once_flag once_;
  mutable std::vector<LeadingLiteral> leads_;
  mutable ConfirmShape shape_;
  mutable std::vector<LeadingLiteral> whole_;  // WholeLiterals, for Matches
  // Lines asked about and lines matched, halved together past 2^16 so that
  // they follow a change in the input.
  mutable std::atomic<std::uint32_t> asked_{0};
  mutable std::atomic<std::uint32_t> matched_{0};
};

}  // namespace faultline
