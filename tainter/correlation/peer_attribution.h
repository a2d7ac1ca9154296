// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/fault_event.h"

namespace faultline {

// Counts, per accused node and rule, the DISTINCT nodes that blamed it
// (lines of a rule with `peer`, whose peer resolved to that node) within a
// sliding window. One node repeating the same complaint counts once: a
// single confused node cannot get another tainted. At `min_reporters` the
// accusation is due; it is due again when the count has doubled since it
// was last taken, or grew and `refresh` has passed (so the reason on the
// node follows the count without a write per reporter).
//
// Pure logic, time given by the caller; bounded (max_accused keys, the
// least recently reported forgotten first). Thread-safety: none.
class PeerAttribution {
 public:
  struct Options {
    int min_reporters = 2;
    std::chrono::seconds window{std::chrono::minutes(10)};
    std::chrono::seconds refresh{std::chrono::seconds(30)};
    std::size_t max_accused = 10'000;
    std::size_t max_evidence = 3;  // reporters' lines kept as the evidence
  };
  using TimePoint = std::chrono::system_clock::time_point;

  struct Blame {
    std::string accused;
    std::string rule;  // the reporters' rule
    int reporters = 0;
    std::vector<std::string> reporter_names;  // sorted, all of them within the window
    std::vector<FaultEvent> evidence;         // the first reports, at most max_evidence
    TimePoint first;
    TimePoint last;
  };

  explicit PeerAttribution(Options options) : options_(options) {}

  // `event` (from `event.node`) blames `accused` at `at`.
  void Report(const FaultEvent& event, const std::string& accused, TimePoint at);
  // Accusations due now (see class comment) of the nodes `owns` accepts
  // (all when empty); marks those taken. One not owned stays due, so the
  // replica that gains the node later (a rebalance, a late assignment)
  // still acts on it.
  std::vector<Blame> TakeDue(TimePoint now,
                             const std::function<bool(const std::string&)>& owns = {});
  // Every accusation with at least min_reporters now, taken or not.
  std::vector<Blame> Standing(TimePoint now);
  // The current accusation of `accused` for `rule`, whether due or not.
  std::optional<Blame> Current(const std::string& accused, const std::string& rule, TimePoint now);
  std::size_t size() const { return entries_.size(); }
  const Options& options() const { return options_; }

 private:
  struct Entry {
    std::list<std::string>::iterator lru;
    std::map<std::string, TimePoint> reporters;  // reporter -> last report
    std::vector<FaultEvent> evidence;
    int taken_count = 0;
    TimePoint taken_at{};
  };
  void Prune(Entry& e, TimePoint now) const;
  Blame MakeBlame(const std::string& key, const Entry& e) const;

  Options options_;
  std::unordered_map<std::string, Entry> entries_;  // "accused\nrule"
  std::list<std::string> lru_;                      // most recent first
};

}  // namespace faultline
