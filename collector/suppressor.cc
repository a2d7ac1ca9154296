// SPDX-License-Identifier: Apache-2.0
#include "collector/suppressor.h"

#include <algorithm>

namespace faultline {

void Suppressor::KeyOf(const FaultEvent& event) {
  // Rule ids and capture names cannot contain NUL; values are length-prefixed
  // so "a","bc" and "ab","c" stay apart.
  key_.assign(event.rule);
  for (const auto& [name, value] : event.fields) {
    key_.push_back('\0');
    key_ += name;
    key_.push_back('\0');
    key_ += std::to_string(value.size());
    key_.push_back(':');
    key_ += value;
  }
}

Suppressor::Verdict Suppressor::Admit(FaultEvent& event, Hold hold,
                                      std::chrono::steady_clock::time_point now,
                                      std::vector<FollowUp>& due) {
  if (options_.window.count() <= 0) return Verdict::kPublish;
  KeyOf(event);
  auto it = entries_.find(key_);
  if (it == entries_.end()) {
    Entry entry;
    entry.window_end = now + options_.window;
    entries_.emplace(key_, std::move(entry));
    return Verdict::kPublish;
  }
  Entry& entry = it->second;
  ++entry.folded;
  entry.last = std::move(event);
  const bool held = std::any_of(entry.holds.begin(), entry.holds.end(),
                                [&](const Hold& h) { return h.holder == hold.holder; });
  if (!held) entry.holds.push_back(hold);
  // The caller takes the hold before it publishes the follow-up.
  const Verdict verdict = held ? Verdict::kFolded : Verdict::kFoldedAndHeld;
  if (entry.folded >= options_.max_folded) Emit(entry, now, due);
  return verdict;
}

void Suppressor::Emit(Entry& entry, std::chrono::steady_clock::time_point now,
                      std::vector<FollowUp>& out) {
  FollowUp follow_up{std::move(entry.last), std::move(entry.holds)};
  follow_up.event.suppressed = entry.folded - 1;  // the event itself is one of the repeats
  out.push_back(std::move(follow_up));
  entry.folded = 0;
  entry.last = FaultEvent();
  entry.holds.clear();
  entry.window_end = now + options_.window;
}

void Suppressor::TakeDue(std::chrono::steady_clock::time_point now, std::vector<FollowUp>& out) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    if (entry.folded >= options_.max_folded && entry.folded > 0) {
      Emit(entry, now, out);
    } else if (now >= entry.window_end) {
      if (entry.folded == 0) {
        it = entries_.erase(it);
        continue;
      }
      Emit(entry, now, out);
    }
    ++it;
  }
}

void Suppressor::TakeAll(std::vector<FollowUp>& out) {
  for (auto& [key, entry] : entries_) {
    if (entry.folded > 0) Emit(entry, entry.window_end, out);
  }
  entries_.clear();
}

}  // namespace faultline
