// SPDX-License-Identifier: Apache-2.0
// A rule's RE2 and what the matcher reads from it (its named groups), built
// when the rule set is compiled or at the rule's first candidate line.
//
// Why at first use: constructing every built-in rule's RE2 was 62.6 M of a
// start's 84.7 M instructions (bench/README.md, issue 30), and a scan
// confirms few rules on most inputs. Only a pattern the build already
// compiled without a diagnostic at the same or larger limits may wait
// (CompileRuleSet says when): every other pattern compiles at load, so that
// its mistakes are reported there, as `file:line:col`.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

namespace faultline {

// The RE2 budgets a rule compiles with (CompileOptions' two).
struct RegexBudget {
  std::int64_t max_memory_bytes = 0;
  // 0, or smaller than max_memory_bytes: tried first (the DFA caches' bound),
  // max_memory_bytes when the program does not fit in it.
  std::int64_t rule_max_memory_bytes = 0;
};

// RE2 of `pattern` under `budget`: in the smaller budget when it fits there,
// else in the larger (so which rules compile never depends on the smaller).
// Check ok() on the result.
std::unique_ptr<RE2> CompileRuleRegex(const std::string& pattern, const RegexBudget& budget);

// What the matcher reads from a rule's regex.
struct RuleRegexParts {
  std::unique_ptr<RE2> re;
  std::vector<std::pair<int, std::string>> named;  // group index -> name, sorted by name
  // How many groups Capture asks RE2 for: 0 to the highest named one (an
  // unnamed group after it is never read, and each costs the submatch
  // engine; with 5 or fewer, group 0 included, RE2 may use OnePass).
  int capture_groups = 1;
};

// Thread-safe: any number of threads may ask for the parts at once; the
// first builds them.
class RuleRegex {
 public:
  // Built now from a compiled `re` (ok()).
  explicit RuleRegex(std::unique_ptr<RE2> re);
  // Built at the first Get from `pattern` (which must outlive this; a Rule's
  // own string in a RuleSet does).
  RuleRegex(const std::string& pattern, RegexBudget budget);

  const RuleRegexParts& Get() const {
    if (!ready_.load(std::memory_order_acquire)) Build();
    return parts_;
  }
  // Whether Get has built the parts (tests: what a start compiles).
  bool built() const { return ready_.load(std::memory_order_acquire); }

 private:
  void Build() const;

  const std::string* pattern_ = nullptr;
  RegexBudget budget_;
  mutable std::once_flag once_;
  mutable std::atomic<bool> ready_{false};
  mutable RuleRegexParts parts_;
};

}  // namespace faultline
