// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "matcher/fault_event.h"

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
// Not thread-safe: the pipeline's match thread owns it.
class Suppressor {
 public:
  struct Options {
    std::chrono::milliseconds window{60'000};  // 0 disables suppression
    std::uint64_t max_folded = 100'000;
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

  // Appends the follow-ups that are due at `now` (window ended, or
  // max_folded reached) and retires idle entries.
  void TakeDue(std::chrono::steady_clock::time_point now, std::vector<FollowUp>& out);

  // Appends every pending follow-up, due or not: for shutdown.
  void TakeAll(std::vector<FollowUp>& out);

  std::size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    std::chrono::steady_clock::time_point window_end;
    std::uint64_t folded = 0;
    FaultEvent last;
    std::vector<Hold> holds;
  };

  // Builds the key into key_ (reused: no allocation per line once warm).
  void KeyOf(const FaultEvent& event);
  void Emit(Entry& entry, std::chrono::steady_clock::time_point now, std::vector<FollowUp>& out);

  const Options options_;
  std::unordered_map<std::string, Entry> entries_;
  std::string key_;
};

}  // namespace faultline
