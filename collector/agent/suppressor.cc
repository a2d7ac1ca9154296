// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/suppressor.h"

#include <algorithm>
#include <charconv>

namespace faultline {
namespace {

// What an entry's event holds, roughly: its strings plus node overhead.
std::size_t EventBytes(const FaultEvent& e) {
  std::size_t bytes = sizeof(FaultEvent) + e.id.size() + e.node.size() + e.boot_id.size() +
                      e.source.size() + e.rule.size() + e.pack.size() + e.category.size() +
                      e.summary.size() + e.message.size();
  for (const auto& [k, v] : e.fields) bytes += 64 + k.size() + v.size();
  for (const auto& [k, v] : e.labels) bytes += 64 + k.size() + v.size();
  return bytes;
}

constexpr std::size_t kEntryOverhead = sizeof(void*) * 8;

}  // namespace

void Suppressor::SetLast(Entry& entry, FaultEvent event) {
  bytes_ -= entry.event_bytes;
  entry.last = std::move(event);
  entry.event_bytes = EventBytes(entry.last);
  bytes_ += entry.event_bytes;
}

void Suppressor::KeyOf(std::string_view rule, const std::map<std::string, std::string>& fields) {
  // Rule ids and capture names cannot contain NUL; values are length-prefixed
  // so "a","bc" and "ab","c" stay apart.
  key_.assign(rule);
  for (const auto& [name, value] : fields) {
    key_.push_back('\0');
    key_ += name;
    key_.push_back('\0');
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value.size()).ptr;
    key_.append(digits, end);
    key_.push_back(':');
    key_ += value;
  }
}

Suppressor::Entry* Suppressor::Fold(Hold hold, std::chrono::steady_clock::time_point now,
                                    bool& held) {
  auto it = entries_.find(key_);
  if (it == entries_.end()) {
    Entry entry;
    entry.window_end = now + options_.window;
    entry.key_bytes = sizeof(Entry) + kEntryOverhead + key_.size();
    if (options_.max_bytes != 0 && bytes_ + entry.key_bytes > options_.max_bytes) {
      ++bypassed_;  // published, not entered: only its repeats go unfolded
      return nullptr;
    }
    bytes_ += entry.key_bytes;
    entries_.emplace(key_, std::move(entry));
    return nullptr;
  }
  Entry& entry = it->second;
  ++entry.folded;
  held = std::any_of(entry.holds.begin(), entry.holds.end(),
                     [&](const Hold& h) { return h.holder == hold.holder; });
  if (!held) entry.holds.push_back(hold);
  return &entry;
}

Suppressor::Verdict Suppressor::Admit(FaultEvent& event, Hold hold,
                                      std::chrono::steady_clock::time_point now,
                                      std::vector<FollowUp>& due) {
  if (options_.window.count() <= 0) return Verdict::kPublish;
  KeyOf(event.rule, event.fields);
  bool held = false;
  Entry* entry = Fold(hold, now, held);
  if (entry == nullptr) return Verdict::kPublish;
  SetLast(*entry, std::move(event));
  entry->pending = false;
  // The caller takes the hold before it publishes the follow-up.
  const Verdict verdict = held ? Verdict::kFolded : Verdict::kFoldedAndHeld;
  if (entry->folded >= options_.max_folded) Emit(*entry, now, due);
  return verdict;
}

Suppressor::Verdict Suppressor::AdmitMatch(const RuleMatch& match, Hold hold,
                                           std::chrono::steady_clock::time_point now,
                                           const EventBuilder& build, std::uint64_t token,
                                           std::vector<FollowUp>& due) {
  if (options_.window.count() <= 0) return Verdict::kPublish;
  KeyOf(match.rule ? std::string_view(match.rule->id) : std::string_view(), match.fields);
  bool held = false;
  Entry* entry = Fold(hold, now, held);
  if (entry == nullptr) return Verdict::kPublish;
  const Verdict verdict = held ? Verdict::kFolded : Verdict::kFoldedAndHeld;
  if (entry->folded >= options_.max_folded) {
    SetLast(*entry, build(token));
    entry->pending = false;
    Emit(*entry, now, due);
    return verdict;
  }
  // Only the last repeat's event is ever sent: remember which it is.
  if (!entry->pending) pending_.push_back(entry);
  entry->pending = true;
  entry->token = token;
  return verdict;
}

void Suppressor::Settle(const EventBuilder& build) {
  for (Entry* entry : pending_) {
    if (!entry->pending) continue;  // emitted at max_folded since
    SetLast(*entry, build(entry->token));
    entry->pending = false;
  }
  pending_.clear();
}

void Suppressor::Emit(Entry& entry, std::chrono::steady_clock::time_point now,
                      std::vector<FollowUp>& out) {
  FollowUp follow_up{std::move(entry.last), std::move(entry.holds)};
  follow_up.event.suppressed = entry.folded - 1;  // the event itself is one of the repeats
  out.push_back(std::move(follow_up));
  entry.folded = 0;
  bytes_ -= entry.event_bytes;
  entry.event_bytes = 0;
  entry.last = FaultEvent();
  entry.pending = false;
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
        std::erase(pending_, &entry);  // normally empty: Settle() came first
        bytes_ -= entry.key_bytes + entry.event_bytes;
        it = entries_.erase(it);
        continue;
      }
      Emit(entry, now, out);
    }
    ++it;
  }
}

void Suppressor::FlushHeld(std::size_t holder, std::uint64_t through_seq,
                           std::vector<FollowUp>& out) {
  for (auto& [key, entry] : entries_) {
    if (entry.folded == 0) continue;  // no holds
    const bool holds_it = std::any_of(entry.holds.begin(), entry.holds.end(), [&](const Hold& h) {
      return h.holder == holder && h.seq <= through_seq;
    });
    if (!holds_it) continue;
    const auto window_end = entry.window_end;
    Emit(entry, window_end, out);
    entry.window_end = window_end;  // an early follow-up does not move the window
  }
}

void Suppressor::TakeAll(std::vector<FollowUp>& out) {
  for (auto& [key, entry] : entries_) {
    if (entry.folded > 0) Emit(entry, entry.window_end, out);
  }
  entries_.clear();
  pending_.clear();
  bytes_ = 0;
}

}  // namespace faultline
