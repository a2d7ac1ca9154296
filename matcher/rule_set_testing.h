// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into RuleSet: not part of the matcher's interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "matcher/rule_set.h"

namespace faultline {

struct RuleSetTesting {
  // RuleSet::Compile with a test's build-time facts instead of the
  // built-in packs' (a stale or corrupt one; empty: none): the rules'
  // prefilter literals from `literal_snapshot` (matcher/literal_snapshot.h)
  // and the proof that they fit in one Set (matcher/set_fit.h).
  static std::shared_ptr<const RuleSet> CompileWithSnapshots(std::vector<Rule> rules,
                                                             const CompileOptions& options,
                                                             Diagnostics& diags,
                                                             std::string_view literal_snapshot,
                                                             std::string_view set_fit_proof = {});
  // RuleSet::Compile with `prefilter_db` as the build's prefilter database
  // (prefilter_db_snapshot.h) and no other build-time facts. The set reads
  // the bytes on its first scan: they must outlive it.
  static std::shared_ptr<const RuleSet> CompileWithPrefilterDb(std::vector<Rule> rules,
                                                               const CompileOptions& options,
                                                               Diagnostics& diags,
                                                               std::string_view prefilter_db);
  // Whether `set`'s prefilter database (built now if it was not) was
  // loaded from the build's instead of compiled.
  static bool PrefilterFromSnapshot(const RuleSet& set);
  // Whether `set`'s sampler (built by its first sampled scan) was loaded
  // from the build's database instead of compiled; false before.
  static bool SamplerFromSnapshot(const RuleSet& set);
  // How many of `set`'s enabled rules took their literals from a snapshot
  // (the others' were extracted when it was compiled).
  static std::size_t LiteralsFromSnapshot(const RuleSet& set);
  // How many rules' patterns Compile compiled to check them (CheckRule);
  // a disabled built-in rule that no override changed is not among them.
  static std::size_t RulesChecked(const RuleSet& set);
  // How many enabled rules' RE2 waits for its first use (rule_regex.h), and
  // how many of those a match has built so far.
  static std::size_t RegexDeferred(const RuleSet& set);
  static std::size_t RegexBuilt(const RuleSet& set);
  // Whether Compile left origin `any`'s Set to its first match (a proof
  // covered the rules), and whether that Set exists now.
  static bool AnySetDeferred(const RuleSet& set);
  static bool AnySetBuilt(const RuleSet& set);
  // From now on `set` treats every RE2::Set match as out of memory, to prove
  // the one-by-one fallback (Debian's RE2 rarely runs out in a real Set
  // match, because Set::Compile already refuses a DFA that cannot start).
  static void SimulateDfaOutOfMemory(const RuleSet& set);
  // From now on `set` samples every scanned buffer of at least `bytes` to
  // choose its prefilter literals (rule_sampling.cc; by default 16 MiB).
  static void SampleBuffersFrom(const RuleSet& set, std::size_t bytes);
  // From now on `set` finds the lines of its rules without a prefilter
  // literal with one search per chunk (unfiltered_search.h) in every scanned
  // buffer of at least `bytes` per such rule (by default 256 KiB).
  static void SearchUnfilteredFrom(const RuleSet& set, std::size_t bytes);
  // The combined regex of that search for `origin`'s rules, built if it was
  // not; empty when there is none (no such rule, or it could not be built).
  static std::string UnfilteredSearchPattern(const RuleSet& set, Origin origin);
  // Whether that search runs its regex only on lines of its byte pairs.
  static bool UnfilteredSearchByBytePairs(const RuleSet& set, Origin origin);
  // How many times a sample made a rule search for another literal set,
  // summed over all scans of `set`.
  static std::uint64_t SampledSwitches(const RuleSet& set);
};

}  // namespace faultline
