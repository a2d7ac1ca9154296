// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/peer_attribution.h"

#include <algorithm>

namespace faultline {

void PeerAttribution::Prune(Entry& e, TimePoint now) const {
  for (auto it = e.reporters.begin(); it != e.reporters.end();) {
    it = now - it->second > options_.window ? e.reporters.erase(it) : std::next(it);
  }
  std::erase_if(e.evidence, [&](const FaultEvent& ev) { return !e.reporters.count(ev.node); });
  if (e.reporters.size() < static_cast<std::size_t>(e.taken_count)) {
    e.taken_count = static_cast<int>(e.reporters.size());
  }
}

void PeerAttribution::Report(const FaultEvent& event, const std::string& accused, TimePoint at) {
  const std::string key = accused + '\n' + event.rule;
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    while (entries_.size() >= options_.max_accused && !lru_.empty()) {
      entries_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key);
    it = entries_.emplace(key, Entry{}).first;
    it->second.lru = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Entry& e = it->second;
  TimePoint& last = e.reporters[event.node];
  const bool new_reporter = last == TimePoint{};
  last = std::max(last, at);
  if (new_reporter && e.evidence.size() < options_.max_evidence) e.evidence.push_back(event);
}

PeerAttribution::Blame PeerAttribution::MakeBlame(const std::string& key, const Entry& e) const {
  Blame b;
  const auto nl = key.find('\n');
  b.accused = key.substr(0, nl);
  b.rule = key.substr(nl + 1);
  b.reporters = static_cast<int>(e.reporters.size());
  for (const auto& [name, at] : e.reporters) {
    b.reporter_names.push_back(name);
    if (b.first == TimePoint{} || at < b.first) b.first = at;
    b.last = std::max(b.last, at);
  }
  b.evidence = e.evidence;
  return b;
}

std::vector<PeerAttribution::Blame> PeerAttribution::Standing(TimePoint now) {
  std::vector<Blame> out;
  for (auto& [key, e] : entries_) {
    Prune(e, now);
    if (static_cast<int>(e.reporters.size()) >= options_.min_reporters) {
      out.push_back(MakeBlame(key, e));
    }
  }
  return out;
}

std::vector<PeerAttribution::Blame> PeerAttribution::TakeDue(
    TimePoint now, const std::function<bool(const std::string&)>& owns) {
  std::vector<Blame> due;
  for (auto& [key, e] : entries_) {
    Prune(e, now);
    const int n = static_cast<int>(e.reporters.size());
    if (n < options_.min_reporters) continue;
    const bool first = e.taken_count == 0;
    const bool doubled = n >= 2 * e.taken_count;
    const bool refreshed = n > e.taken_count && now - e.taken_at >= options_.refresh;
    if (!first && !doubled && !refreshed) continue;
    if (owns && !owns(key.substr(0, key.find('\n')))) continue;
    e.taken_count = n;
    e.taken_at = now;
    due.push_back(MakeBlame(key, e));
  }
  std::sort(due.begin(), due.end(),
            [](const Blame& a, const Blame& b) { return a.accused < b.accused; });
  return due;
}

std::optional<PeerAttribution::Blame> PeerAttribution::Current(const std::string& accused,
                                                               const std::string& rule,
                                                               TimePoint now) {
  auto it = entries_.find(accused + '\n' + rule);
  if (it == entries_.end()) return std::nullopt;
  Prune(it->second, now);
  if (it->second.reporters.empty()) return std::nullopt;
  return MakeBlame(it->first, it->second);
}

}  // namespace faultline
