// SPDX-License-Identifier: Apache-2.0
// The tainter's check of each event against the rule that made it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>

#include "base/fault_event.h"
#include "matcher/rule_set.h"

namespace faultline {

// An event arrives through Kafka, which any producer that can reach the
// topic may write: what the tainter does with it must come from the rule
// packs, never from what the event says. RuleCheck holds the rule packs the
// tainter loaded (the agents' packs, by the matcher's own loader) and, per
// event:
//  - a rule id it does not know (or a disabled rule) is `unknown_rule`;
//  - the outcome (category, severity, action, summary, threshold, expire) is
//    recomputed from the rule and, where the rule classifies, from the
//    event's captures (matcher/classify.h), exactly as the agent computes it;
//  - an event whose claims differ from that outcome, whose origin is not
//    one of the rule's `sources:`, or whose journal labels fail the rule's
//    `journal:` constraint, is `rule_mismatch`.
// In every accepted case the event's outcome fields are overwritten with the
// rule's, so the policy reads only what the rules say.
//
// What is still taken as written: the node (bound to the Kafka key by the
// consumer), the captures and the log line, the times, `suppressed`.
//
// Thread-safety: Check() is const; Replace() must not race with it (the
// daemon's one thread does both).
class RuleCheck {
 public:
  // What a known rule whose claims differ from the event's is taken as.
  enum class OnMismatch : std::uint8_t {
    kSetAside,      // default: not decided (dead-lettered, counted)
    kDecideByRule,  // decided by the tainter's copy of the rule (rolling upgrades)
  };

  struct Verdict {
    // "" (accepted: the event now carries the rule's outcome),
    // "unknown_rule" or "rule_mismatch".
    std::string set_aside;
    // What differed, for the dead-letter header and the log line:
    // "action 'taint' but rule 'x' says 'event'"; also set for a mismatch
    // decided by the rule.
    std::string detail;
    // The event's claims contradict its (known) rule, set aside or not.
    bool mismatch = false;
    bool ok() const { return set_aside.empty(); }
  };

  RuleCheck(std::shared_ptr<const RuleSet> rules, OnMismatch on_mismatch);

  // Checks `event` and, unless it is set aside, rewrites its outcome fields
  // from the rule.
  Verdict Check(FaultEvent& event) const;

  // Swaps in a reloaded rule set.
  void Replace(std::shared_ptr<const RuleSet> rules);
  const RuleSet& rules() const { return *rules_; }
  OnMismatch on_mismatch() const { return on_mismatch_; }

 private:
  std::shared_ptr<const RuleSet> rules_;
  std::unordered_map<std::string, const Rule*> by_id_;  // enabled rules only
  OnMismatch on_mismatch_;
};

// What the rule pack files named by `sources` look like on disk now (each
// file's path, inode, size and mtime, in name order): a change means the
// packs should be loaded again. The kubelet updates a ConfigMap volume by a
// symlink swap, which changes every file's inode.
std::string RulePackFingerprint(const RuleSources& sources);

// Loads the rule packs named by `sources` with the matcher's loader
// (matcher/rule_set.h LoadRules: built-in packs, then files and
// directories). On any error, prints every diagnostic compiler-style
// (FILE:LINE:COL: error: ...) to `err` and returns nullptr.
std::shared_ptr<const RuleSet> LoadRulePacks(const RuleSources& sources, std::ostream& err);

// At most one log line per `interval` (set-aside events may come in a
// flood: a forging producer, or a fleet of agents on other rule packs);
// counts the lines held back, which the next line reports. The metrics
// count every event. Thread-safety: none.
class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::seconds interval = std::chrono::seconds(10))
      : interval_(interval) {}
  bool Due(std::chrono::steady_clock::time_point now) {
    if (logged_ && now - last_ < interval_) {
      ++suppressed_;
      return false;
    }
    logged_ = true;
    last_ = now;
    return true;
  }
  // How many lines were held back since the last call.
  std::uint64_t TakeSuppressed() { return std::exchange(suppressed_, 0); }

 private:
  std::chrono::seconds interval_;
  bool logged_ = false;
  std::chrono::steady_clock::time_point last_{};
  std::uint64_t suppressed_ = 0;
};

}  // namespace faultline
