// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/fault_event.h"
#include "matcher/rule.h"

namespace faultline {

// Folds repeats of one fault so that a log flood costs CPU per line, not
// Kafka messages per line.
//
// The key is (rule, every capture). The first occurrence is published at
// once. Repeats within `window` after it are counted, and at the window's end
// one follow-up event stands for them all: the last repeat, with
// `suppressed` = how many repeats it folds. If repeats went on, a new window
// starts with the follow-up (so a steady flood yields one event per window);
// a window with no repeats ends the entry, and the next occurrence is a
// first one again. A follow-up is also due early once `max_folded` repeats
// are folded, which bounds how much of the input one event stands for (and
// how much the agent must re-read after a crash).
//
// Holds: a folded repeat's record must not be committed before the
// follow-up that stands for it is delivered. The caller passes an opaque
// Hold for each folded record; the suppressor keeps the first Hold per
// holder (source) of each window, which is enough because commits advance
// in read order, and hands them back with the follow-up.
//
// Two ways in: Admit() takes a built event; AdmitMatch() takes the match
// before its event is built, and builds the event of an entry's last repeat
// only when it is needed (once per Settle(), or when max_folded is reached),
// so that a folded repeat costs a key and a hash lookup, not an event.
// Both give the same verdicts and follow-ups for the same input.
//
// Not thread-safe: the pipeline's match thread owns it.
class Suppressor {
 public:
  struct Options {
    std::chrono::milliseconds window{60'000};  // 0 disables suppression
    std::uint64_t max_folded = 100'000;
    // Bound of the entries' memory (keys and held events, estimated). When
    // a new key would pass it, that occurrence is published and not entered
    // (nothing is lost; only its repeats are not folded) and counted in
    // bypassed(). Captures are bounded (FaultEvent::kMaxFieldBytes), so an
    // entry costs a few KiB. 0: no bound.
    std::size_t max_bytes = std::size_t{16} << 20;
  };

  struct Hold {
    std::size_t holder = 0;  // the source's index
    std::uint64_t seq = 0;   // the record's sequence number within it
  };

  enum class Verdict {
    kPublish,        // a first occurrence: publish it now
    kFoldedAndHeld,  // folded; the suppressor keeps `hold`: the caller must not
                     // commit that record until the follow-up is delivered
    kFolded,         // folded; an earlier record of the same holder is held
  };

  struct FollowUp {
    // The last repeat, with `suppressed` = the other repeats it stands for
    // (it counts as one line itself: fault_event.h).
    FaultEvent event;
    std::vector<Hold> holds;
  };

  explicit Suppressor(Options options) : options_(options) {}

  // Decides about one event. When this repeat brings its entry to
  // max_folded, the follow-up is appended to `due` at once.
  // On a fold, `event` is moved from (it may become the follow-up): a flood
  // then costs no copy per line.
  Verdict Admit(FaultEvent& event, Hold hold, std::chrono::steady_clock::time_point now,
                std::vector<FollowUp>& due);

  // Builds the event of the match the caller named `token` in AdmitMatch().
  using EventBuilder = std::function<FaultEvent(std::uint64_t token)>;

  // Admit() for a match whose event is not built yet. The key is the
  // match's rule id and captures, as Admit() takes them from the event
  // (FaultEvent::rule and ::fields are copies of them). kPublish: the caller
  // builds and publishes the event itself. On a fold the suppressor keeps
  // `token` as its entry's last repeat: `build(token)` runs at once if this
  // repeat brings the entry to max_folded, else at the next Settle().
  // Tokens must stay valid until that Settle().
  Verdict AdmitMatch(const RuleMatch& match, Hold hold, std::chrono::steady_clock::time_point now,
                     const EventBuilder& build, std::uint64_t token, std::vector<FollowUp>& due);

  // Builds the events of the last repeats AdmitMatch() folded since the
  // previous Settle(). Call it before the tokens become invalid, and before
  // TakeDue() or TakeAll().
  void Settle(const EventBuilder& build);

  // Appends the follow-ups that are due at `now` (window ended, or
  // max_folded reached) and retires idle entries.
  void TakeDue(std::chrono::steady_clock::time_point now, std::vector<FollowUp>& out);

  // Appends the follow-up of every entry that holds a record of `holder`
  // at or before `through_seq`, without ending its window (it goes on
  // folding into its next follow-up, due at the same window end). The
  // pipeline calls it when too many records wait behind such a hold: commits
  // advance in read order, so one open window would otherwise hold back
  // every later record of its source until the window ends. Call it after
  // Settle().
  void FlushHeld(std::size_t holder, std::uint64_t through_seq, std::vector<FollowUp>& out);

  // Appends every pending follow-up, due or not: for shutdown.
  void TakeAll(std::vector<FollowUp>& out);

  std::size_t entries() const { return entries_.size(); }
  // Estimated bytes held by the entries; first occurrences not entered
  // because of Options::max_bytes.
  std::size_t bytes() const { return bytes_; }
  std::uint64_t bypassed() const { return bypassed_; }

 private:
  struct Entry {
    std::chrono::steady_clock::time_point window_end;
    std::uint64_t folded = 0;
    FaultEvent last;
    bool pending = false;  // `last` is stale: build it from `token`
    std::uint64_t token = 0;
    std::vector<Hold> holds;
    std::size_t key_bytes = 0;    // what the key costs in bytes_
    std::size_t event_bytes = 0;  // what `last` costs in bytes_
  };
  // Sets entry.last (and bytes_).
  void SetLast(Entry& entry, FaultEvent event);

  // Builds the key into key_ (reused: no allocation per line once warm).
  void KeyOf(std::string_view rule, const std::map<std::string, std::string>& fields);
  // The entry of key_ after a repeat was counted in it, or nullptr when key_
  // is new (then it has been entered: a first occurrence).
  Entry* Fold(Hold hold, std::chrono::steady_clock::time_point now, bool& held);
  void Emit(Entry& entry, std::chrono::steady_clock::time_point now, std::vector<FollowUp>& out);

  const Options options_;
  std::unordered_map<std::string, Entry> entries_;  // nodes: Entry* stay valid until erased
  std::vector<Entry*> pending_;                     // entries AdmitMatch() left pending
  std::string key_;
  std::size_t bytes_ = 0;
  std::uint64_t bypassed_ = 0;
};

}  // namespace faultline
