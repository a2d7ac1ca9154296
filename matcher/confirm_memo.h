// SPDX-License-Identifier: Apache-2.0
// A bounded memo of recent confirmations: for (RuleSet, rule, text), whether
// the rule's regex matched the text and where its named groups were. A node
// in trouble repeats the same message thousands of times (an Xid or AER
// flood, a flapping link, NCCL watchdog lines from every rank); after the
// timestamp the text is byte-identical, and RE2's confirmation with groups
// (9,000 to 20,000 instructions a line on the user-gpu set) is paid once.
//
// Why a hit may skip RE2. Impl::Capture's result is a function of the rule's
// compiled regex and the bytes of `text` alone:
//  - RE2 is given `text` as its whole input: ^, $, \b and \B at its ends
//    see the text's edges, never the bytes of the line around it
//    (AnchoredCapture passes the same `text` as RE2's context; its leading
//    literals and adaptive order choose where RE2 is asked, not what it
//    answers: anchored_capture.h).
//  - The origin and `journal:` constraints choose which rules are asked
//    (MatchCandidates, DropUnverifiedJournalMatches), not what one rule's
//    regex answers; the memo is asked per rule, after that choice.
//  - A DFA out of memory makes RE2 fall back to its NFA: the same answer.
//  - ResolveOutcome is run again on a hit, from the same fields.
//  - The agent's records (RuleSet::Match(const LogRecord&)) reach the memo
//    through the same Capture with the record's text; their labels are
//    applied to the matches afterwards (DropUnverifiedJournalMatches).
// The key is exact: the hash only picks the slot and the bytes decide; each
// slot is tagged with the owning RuleSet's number (never reused in a
// process), so a reloaded RuleSet never sees another's entries, even one
// allocated at the same address.
//
// The same memo, another instance per thread, holds RE2::Set answers
// (RuleSet::Impl::SetHits): which of an origin's rules match a text.
//
// Per thread (RuleSet's contract: Match is const and runs on many threads
// at once): no locks, no sharing. Bounded: kSets x kWays slots of at most
// kMaxTextBytes each (~340 KiB a thread that confirms, allocated on its
// first confirmation); longer texts and rules with more than kMaxGroups
// named groups are not memoised. Off by itself while hits are rare (a scan
// of distinct lines): it then costs a counter per confirmation.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace faultline {

// A text to look up, its hash taken once for all the rules asked about it.
class MemoText {
 public:
  explicit MemoText(std::string_view text) : text_(text) {}
  // With a hash given, not taken (tests: texts that collide).
  MemoText(std::string_view text, std::uint64_t hash) : text_(text), hash_(hash), hashed_(true) {}
  std::string_view text() const { return text_; }
  std::uint64_t hash() const;  // of the bytes; taken on first use

 private:
  std::string_view text_;
  mutable std::uint64_t hash_ = 0;
  mutable bool hashed_ = false;
};

// Where one named group was within the text; kNoGroup: it took no part.
struct GroupSpan {
  static constexpr std::uint16_t kNoGroup = 0xFFFF;
  std::uint16_t offset = kNoGroup;
  std::uint16_t size = 0;
};

class ConfirmMemo {
 public:
  // Two ways a set, so that a storm's entries are not evicted by the one
  // distinct line between two of its lines; the way evicted is the one less
  // used lately (each store halves the other's count).
  static constexpr std::size_t kWays = 2;
  static constexpr std::size_t kSets = 512;
  static constexpr std::size_t kMaxTextBytes = 256;
  static constexpr std::size_t kMaxGroups = 12;
  // The off-switch: over each window of kWindow lookups, fewer than
  // 1/kMinHitShare hits turn the memo off for the next kOffConfirmations.
  static constexpr std::uint32_t kWindow = 1024;
  static constexpr std::uint32_t kMinHitShare = 16;
  static constexpr std::uint32_t kOffConfirmations = 16384;

  struct Result {
    bool matched = false;

    std::array<GroupSpan, kMaxGroups> spans{};
  };

  // A number no other RuleSet of this process has (its memo tag).
  static std::uint64_t NewOwner();
  // The calling thread's memo.
  static ConfirmMemo& ForThisThread();
  // The calling thread's memo of RE2::Set answers (RuleSet::Impl::SetHits).
  static ConfirmMemo& ForSetsOfThisThread();

  // Whether (owner, rule, text) may be memoised at all: short enough, and
  // the memo is on. Counts towards the off-switch's window when it says no
  // because the memo is off.
  bool Usable(std::string_view text, std::size_t groups);
  // The stored result for exactly these bytes, or null.
  const Result* Find(std::uint64_t owner, std::uint32_t rule, const MemoText& text);
  // Stores `result` for (owner, rule, text), evicting the slot's entry.
  void Store(std::uint64_t owner, std::uint32_t rule, const MemoText& text, const Result& result);

  std::uint64_t hits() const { return hits_; }
  std::uint64_t lookups() const { return lookups_; }

 private:
  struct Slot {
    std::uint64_t owner = 0;  // 0: empty (owners start at 1)
    std::uint64_t hash = 0;
    std::uint32_t rule = 0;
    std::uint16_t size = 0;
    std::uint32_t uses = 0;  // hits, halved whenever the other way is stored
    Result result;
    std::array<char, kMaxTextBytes> bytes;  // not initialised: read only up to `size` once stored
  };
  // The first slot of the set (rule, text) goes to.
  static std::size_t SetOf(std::uint64_t hash, std::uint32_t rule);

  std::array<Slot, kSets * kWays> slots_;  // bytes uninitialised until stored
  std::uint64_t hits_ = 0;
  std::uint64_t lookups_ = 0;
  std::uint32_t window_lookups_ = 0;
  std::uint32_t window_hits_ = 0;
  std::uint32_t off_for_ = 0;  // confirmations left while off
};

}  // namespace faultline
