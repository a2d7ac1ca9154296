// SPDX-License-Identifier: Apache-2.0
// RuleSet's insides, shared by the files that build and run it
// (rule_set.cc, rule_scan.cc). Not a contract: only matcher/ includes it.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <re2/re2.h>
#include <re2/set.h>

#include "matcher/anchored_capture.h"
#include "matcher/confirm_memo.h"
#include "matcher/literal_expansion.h"
#include "matcher/literal_prefilter.h"
#include "matcher/literal_snapshot.h"
#include "matcher/rule_regex.h"
#include "matcher/rule_set.h"
#include "matcher/set_fit.h"
#include "matcher/unfiltered_search.h"

namespace faultline {

inline constexpr std::size_t kOriginCount = 6;  // kernel, journal, pod, ibcounters, check, any
inline std::size_t OriginIndex(Origin o) { return static_cast<std::size_t>(o); }

struct CompiledRule {
  const Rule* rule = nullptr;
  // Its RE2 and named groups; for a pattern the build checked, built at the
  // first line that needs it (rule_regex.h).
  std::unique_ptr<RuleRegex> regex;
  // Finds the match and its groups at the literals every match begins
  // with, when the pattern proves some (anchored_capture.h): no reverse
  // DFA pass to find where the match starts. Without named groups, its
  // Matches says yes or no (a literal search when the pattern is only
  // literals).
  std::unique_ptr<AnchoredCapture> anchored;
  std::uint32_t origin_mask = 0;  // bit per Origin it trusts
};

// All enabled rules that trust one origin, in one RE2::Set.
struct OriginSet {
  std::vector<int> rules;  // set index -> index into Impl::compiled
  // Built by Impl::SetOf on first use (the origin `any`'s at Compile, which
  // proves that every origin's fits: each holds a subset of its rules). Five
  // Sets were 37 M instructions of every start, most never used.
  mutable std::once_flag set_once;
  mutable std::unique_ptr<RE2::Set> set;
  // Rules of this origin that have no prefilter literal (every rule when
  // no rule has one): without `unfiltered_search` they are candidates on
  // every line.
  std::vector<int> unfiltered;
  // The lines where one of them may match, found by one regex per chunk
  // (unfiltered_search.h). Built by Impl::UnfilteredSearchOf on the first
  // scan large enough; null: none, or it could not be built.
  mutable std::once_flag unfiltered_once;
  mutable std::unique_ptr<UnfilteredSearch> unfiltered_search;
  std::vector<std::uint32_t> handles;  // `rules` as candidates (every rule)
};

struct RuleSet::Impl {
  std::vector<Rule> rules;             // all, in load order; stable addresses
  std::vector<CompiledRule> compiled;  // enabled rules only, in load order
  std::array<OriginSet, kOriginCount> by_origin;
  CompileOptions options;
  // Set by RuleSetTesting only (matcher/rule_set_testing.h).
  std::atomic<bool> simulate_dfa_out_of_memory{false};
  // Where BuildPrefilter takes the literals of the patterns it holds (the
  // built-in packs' snapshot; null: extract every pattern's), and how many
  // enabled rules' it took from there.
  const LiteralSnapshot* literal_snapshot = nullptr;
  std::size_t literals_from_snapshot = 0;
  // How many rules' patterns CheckRule compiled (RuleSetTesting).
  std::size_t rules_checked = 0;
  // How many enabled rules' RE2 waits for their first use (rule_regex.h).
  std::size_t regex_deferred = 0;
  // The build proved that these rules fit in one Set (set_fit.h): origin
  // `any`'s was not built at Compile, it is built when first matched.
  bool any_set_proven = false;
  // The prefilter is on: use_prefilter and some rule has a literal. Its
  // Vectorscan database of `prefilter_literals` is built on first use
  // (StaticPrefilter): a large scan searches a plan chosen from a sample
  // instead (SamplePrefilter), and building this one cost 20 M
  // instructions, a sixth of a start. The built-in packs' is loaded from
  // the build (prefilter_db_snapshot.h).
  bool prefilter_on = false;
  mutable bool prefilter_from_snapshot = false;
  mutable bool sampler_from_snapshot = false;
  std::vector<RequiredLiteral> prefilter_literals;
  mutable std::once_flag prefilter_once;
  mutable std::unique_ptr<LiteralPrefilter> prefilter;  // null until built, or on failure
  // The databases the build compiled for the built-in packs' literals
  // (prefilter_db_snapshot.h; empty: none). StaticPrefilter (and
  // BuildSampler) loads one when it was compiled for prefilter_literals
  // (sample_literals), and says so in prefilter_from_snapshot (and
  // sampler_from_snapshot), set under prefilter_once (sampler_once).
  std::string_view prefilter_db_snapshot;
  // Per prefilter literal id: the origins (bit per Origin) of the rules that
  // required it.
  std::vector<std::uint32_t> literal_origins;
  // Per prefilter literal id: the compiled rules that required it, ascending.
  std::vector<std::vector<std::uint32_t>> literal_rules;
  // Per compiled rule: its prefilter literals (empty: none, runs everywhere).
  std::vector<std::vector<RequiredLiteral>> rule_literals;
  // Per compiled rule: further required literal sets; a line that lacks
  // one of each is not a candidate for the rule (ExtractConfirmLiteralSets).
  std::vector<std::vector<std::vector<RequiredLiteral>>> rule_confirm;
  // Per compiled rule: its expanded sets (ExtractExpandedLiteralSets),
  // checked after rule_confirm's (they stop the near misses those let
  // through, at a higher cost), whichever plan the scan uses.
  std::vector<std::vector<ExpandedSet>> rule_expanded;
  mutable std::atomic<std::uint64_t> dfa_fallbacks{0};

  // Sampling (rule_sampling.cc), built on the first scan of a buffer large
  // enough to sample (it costs start-up time every other use can skip).
  // Per compiled rule: the literal sets it may search for, as ids into
  // `sample_literals`: its plain sets (ExtractAlternativeLiteralSets, the
  // chosen one first), then its expanded sets in their search form; empty
  // when the rule has no alternative.
  mutable std::once_flag sampler_once;
  mutable std::vector<std::vector<std::vector<std::uint32_t>>> rule_alternatives;
  // Per compiled rule: how many of its rule_alternatives are plain sets.
  mutable std::vector<std::size_t> rule_plain_alternatives;
  mutable std::vector<RequiredLiteral> sample_literals;
  mutable std::unique_ptr<LiteralPrefilter> sampler;  // of sample_literals; null: no sampling
  // Buffers at least this long are sampled (RuleSetTesting lowers it).
  // Sampling costs ~10 ms of CPU (two Vectorscan builds, ~400 and ~150
  // literals; the built-in packs' first is loaded from the build,
  // prefilter_db_snapshot.h); it saved ~0.3 ms per MiB on the 0.1% corpus and ~0.5 ms on
  // near misses, so from 16 MiB (bench/README.md, 2026-11-25).
  mutable std::atomic<std::size_t> sample_min_bytes{std::size_t{16} << 20};
  mutable std::atomic<std::uint64_t> sampled_switches{0};  // rules switched, all scans (tests)
  // A buffer searches for its unfiltered rules' lines with UnfilteredSearch
  // when it holds at least this many bytes per unfiltered rule of its
  // origin (RuleSetTesting lowers it): a chunk's worth. Building the search
  // is one RE2 compile (well under a millisecond for user-loose's five),
  // while running such a rule on every line cost about 2 ms per MiB; a
  // one-line record (the agent's Match) keeps to that path.
  mutable std::atomic<std::size_t> unfiltered_search_bytes_per_rule{std::size_t{256} << 10};

  // This RuleSet's tag in each thread's ConfirmMemo (confirm_memo.h).
  const std::uint64_t memo_owner = ConfirmMemo::NewOwner();
  // Appends the match of compiled rule `index` on `text`, if it matches:
  // from the thread's ConfirmMemo when it holds these bytes for this rule.
  void Capture(int index, const MemoText& text, std::vector<RuleMatch>& out) const;
  // The same for a rule that RunSet found matching `text`: a rule without
  // named groups has nothing left to ask RE2 (the Set runs each rule's
  // pattern with its options over the same text, PartialMatch's question),
  // so its match is written without a second DFA pass; a rule with groups
  // is asked for them by Capture.
  void CaptureSetHit(int index, const MemoText& text, std::vector<RuleMatch>& out) const;
  // Runs `set` over `text` (indices into `map`), falling back to one by one
  // on DFA out of memory, or when there is no Set. Appends matching
  // compiled indices to `hits`.
  void RunSet(const RE2::Set* set, const std::vector<int>& map, std::string_view text,
              std::vector<int>& hits) const;
  // RunSet over origin set `s`'s rules (its Set), sorted: from the thread's
  // memo of Set answers (ConfirmMemo::ForSetsOfThisThread) when it holds
  // this origin's answer for these bytes. The Set's answer is a function of
  // the rules and the text alone, as each rule's is (confirm_memo.h); it is
  // kept under a number no rule has, kSetMemoRule + the origin's index, its
  // rules' indices in the spans' offsets (at most ConfirmMemo::kMaxGroups of
  // them; more are not kept). Real logs repeat: on user-loose's real corpus
  // the Set pass over the lines its literal-less rules named went from
  // 57.5 M instructions to 27.0 M. Not in the rules' memo: there the Sets'
  // entries evicted the rules' and its Capture cost rose by half.
  void SetHits(const OriginSet& s, Origin origin, const MemoText& text,
               std::vector<int>& hits) const;
  static constexpr std::uint32_t kSetMemoRule = 0xFFFF0000u;
  // The origin's Set, built on first use; null when it has no rules (or,
  // which Compile rules out, its Set did not build: RunSet then runs each
  // rule alone).
  const RE2::Set* SetOf(const OriginSet& s) const;
  // The database of prefilter_literals, built on first use; null when the
  // prefilter is off or Vectorscan refused it (callers then visit every line).
  const LiteralPrefilter* StaticPrefilter() const;
  // The origin's UnfilteredSearch, built on first use; null when it has no
  // unfiltered rules or the search could not be built (rule_scan.cc).
  // `sample`: the start of the first buffer it searches (Build).
  const UnfilteredSearch* UnfilteredSearchOf(const OriginSet& s,
                                             std::string_view sample = {}) const;
  const UnfilteredSearch* UnfilteredSearchOf(Origin origin) const {
    return UnfilteredSearchOf(by_origin[OriginIndex(origin)]);
  }
};

// Gathers impl.prefilter_literals from each compiled rule's required literal
// when impl.options.use_prefilter is set; warns W202 for rules without one (they
// run on every line). A rule's literals come from impl.literal_snapshot when
// it holds the rule's pattern. Defined in rule_scan.cc.
void BuildPrefilter(RuleSet::Impl& impl, Diagnostics& diags);

// What the build extracted, proved and compiled for the built-in packs,
// each null (empty) when the binary has none or it is not readable by this
// build.
struct BuildTimeFacts {
  const LiteralSnapshot* literals = nullptr;
  const SetFitProof* set_fit = nullptr;
  std::string_view prefilter_db;  // bytes of prefilter_db_snapshot.h; empty: none
};
// The built-in packs' facts, read once (rule_scan.cc).
BuildTimeFacts BuiltinFacts();

// RuleSet::Compile with `facts` (rule_set.cc).
std::unique_ptr<RuleSet::Impl> CompileRuleSet(std::vector<Rule> rules,
                                              const CompileOptions& options, Diagnostics& diags,
                                              const BuildTimeFacts& facts);

// The patterns of compiled rules `members`, in that order (rule_set.cc).
std::vector<std::string_view> PatternsOf(const std::vector<int>& members,
                                         const std::vector<CompiledRule>& compiled);

// The prefilter's tables for one scan: Impl's own, or ones chosen for the
// scanned buffer from a sample of it (SamplePrefilter).
struct PrefilterPlan {
  std::unique_ptr<LiteralPrefilter> prefilter;
  // As the Impl fields of the same names.
  std::vector<std::uint32_t> literal_origins;
  std::vector<std::vector<std::uint32_t>> literal_rules;
  std::vector<std::vector<std::vector<RequiredLiteral>>> rule_confirm;
};

// For a buffer of at least impl.sample_min_bytes: counts, in its first MiB,
// how often each rule's literal sets occur, and returns a plan that
// searches for each rule's cheapest set there, each literal cut after its
// rarest 8 bytes (literal_keys.h); the whole literals and the rule's other
// sets confirm a hit. Null when the buffer is not sampled, or on any failure.
std::unique_ptr<PrefilterPlan> SamplePrefilter(const RuleSet::Impl& impl, std::string_view buffer);

// The first `bytes` of `buffer`, cut after its last newline there (all of
// it when shorter): the samples that choose a scan's literals and the
// unfiltered search's byte pairs.
std::string_view Head(std::string_view buffer, std::size_t bytes);

// Drops, from out[first...], matches of rules whose `journal:` constraint
// the labels of a journal record do not satisfy (rule_set.cc).
void DropUnverifiedJournalMatches(Origin origin, const Labels& labels, std::size_t first,
                                  std::vector<RuleMatch>& out);

}  // namespace faultline
