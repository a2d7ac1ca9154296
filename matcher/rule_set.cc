// SPDX-License-Identifier: Apache-2.0
// Compiles rules into per-origin RE2::Sets (plus an optional literal
// prefilter) and matches one record. Whole-buffer scanning is rule_scan.cc.
#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <span>

#include "matcher/classify.h"
#include "matcher/rule_set_impl.h"
#include "matcher/rule_set_testing.h"

namespace faultline {
namespace {

bool Trusts(const Rule& rule, Origin origin) {
  return std::find(rule.sources.begin(), rule.sources.end(), origin) != rule.sources.end();
}

RegexBudget BudgetOf(const CompileOptions& options) {
  return {.max_memory_bytes = options.max_memory_bytes,
          .rule_max_memory_bytes = options.rule_max_memory_bytes};
}

// The build compiled and checked every built-in rule at the default limits
// (tests/matcher/builtin_packs_test.cc, disabled_rule_check_test.cc); limits
// at least as large pass the same checks.
bool BuildCheckHolds(const Rule& rule, const CompileOptions& options) {
  return rule.checked_at_build && options.max_program_size >= CompileOptions{}.max_program_size &&
         options.max_memory_bytes >= CompileOptions{}.max_memory_bytes;
}

// E105 for each capture name in `names` that `defined` lacks.
void CheckCaptures(const std::vector<std::string>& names, const std::set<std::string>& defined,
                   const Rule& rule, const SourceLocation& at, std::string_view used_in,
                   Diagnostics& diags) {
  for (const std::string& name : names) {
    if (defined.count(name)) continue;
    diags.Error("E105", at,
                "capture '" + name + "' used in " + std::string(used_in) +
                    " is not defined by the pattern of rule '" + rule.id + "'");
  }
}

SourceLocation KeyAt(const Rule& rule, const char* key) {
  auto it = rule.keys_at.find(key);
  return it != rule.keys_at.end() ? it->second : rule.defined_at;
}

void CheckOutcomeCaptures(const Outcome& o, const std::set<std::string>& defined, const Rule& rule,
                          const SourceLocation& at, Diagnostics& diags);

void CheckClassifyCaptures(const Classification& c, const std::set<std::string>& defined,
                           const Rule& rule, Diagnostics& diags) {
  if (c.capture.empty()) {
    diags.Error("E102", c.at,
                "missing required key 'capture' in classify of rule '" + rule.id + "'");
  } else {
    CheckCaptures({c.capture}, defined, rule, c.at, "classify.capture", diags);
  }
  for (const auto& [key, outcome] : c.table) {
    CheckOutcomeCaptures(outcome, defined, rule, c.at, diags);
  }
  CheckOutcomeCaptures(c.fallback, defined, rule, c.at, diags);
}

void CheckOutcomeCaptures(const Outcome& o, const std::set<std::string>& defined, const Rule& rule,
                          const SourceLocation& at, Diagnostics& diags) {
  if (o.summary) CheckCaptures(SummaryCaptures(*o.summary), defined, rule, at, "summary", diags);
  if (o.threshold) CheckCaptures(o.threshold->key, defined, rule, at, "threshold.key", diags);
  if (o.classify) CheckClassifyCaptures(*o.classify, defined, rule, diags);
}

// Regex-dependent checks of one rule: E104, E111, E105, W201.
std::unique_ptr<RE2> CheckRule(const Rule& rule, const CompileOptions& options,
                               Diagnostics& diags) {
  if (rule.pattern.empty()) {
    if (!rule.keys_at.count("pattern")) return nullptr;  // E102 or E003 already said so
    diags.Error("E104", rule.pattern_at.line ? rule.pattern_at : rule.defined_at,
                "invalid regex: empty pattern in rule '" + rule.id + "'");
    return nullptr;
  }
  std::unique_ptr<RE2> re = CompileRuleRegex(rule.pattern, BudgetOf(options));
  if (!re->ok()) {
    diags.Error("E104", rule.pattern_at, "invalid regex: " + re->error());
    return nullptr;
  }
  if (re->ProgramSize() > options.max_program_size) {
    diags.Error("E111", rule.pattern_at,
                "regex program too large: size " + std::to_string(re->ProgramSize()) +
                    " exceeds the limit of " + std::to_string(options.max_program_size) +
                    "; simplify the pattern (bounded repeats like {1,500} multiply its size)");
    return nullptr;
  }
  std::set<std::string> defined;
  for (const auto& [name, index] : re->NamedCapturingGroups()) defined.insert(name);
  if (rule.threshold) {
    CheckCaptures(rule.threshold->key, defined, rule, KeyAt(rule, "threshold"), "threshold.key",
                  diags);
  }
  CheckCaptures(SummaryCaptures(rule.summary), defined, rule, KeyAt(rule, "summary"), "summary",
                diags);
  if (rule.classify) CheckClassifyCaptures(*rule.classify, defined, rule, diags);
  if (!rule.peer.empty()) {
    CheckCaptures({rule.peer}, defined, rule, KeyAt(rule, "peer"), "peer", diags);
  }
  for (const RuleTest& t : rule.match_tests) {
    for (const auto& [name, value] : t.fields) {
      CheckCaptures({name}, defined, rule, t.at, "test fields", diags);
    }
  }
  if (!rule.disabled) {
    if (rule.match_tests.empty() && rule.no_match_tests.empty()) {
      diags.Warning("W201", rule.defined_at, "rule '" + rule.id + "' has no tests");
    } else if (rule.match_tests.empty()) {
      diags.Warning("W201", rule.defined_at, "rule '" + rule.id + "' has no match tests");
    } else if (rule.no_match_tests.empty()) {
      diags.Warning("W201", rule.defined_at, "rule '" + rule.id + "' has no no_match tests");
    }
  }
  return re;
}

std::unique_ptr<RE2::Set> BuildSet(const std::vector<int>& members,
                                   const std::vector<CompiledRule>& compiled,
                                   const CompileOptions& options) {
  return BuildPatternSet(PatternsOf(members, compiled), options.max_memory_bytes);
}

}  // namespace

std::vector<std::string_view> PatternsOf(const std::vector<int>& members,
                                         const std::vector<CompiledRule>& compiled) {
  std::vector<std::string_view> patterns;
  patterns.reserve(members.size());
  for (int index : members) {
    patterns.push_back(compiled[static_cast<std::size_t>(index)].rule->pattern);
  }
  return patterns;
}

namespace {

// Fills `m` with rule `c`'s named groups (`rx`, its regex's) and resolves its
// outcome: the same for a match RE2 just found and one read from the memo.
// `group_at(i, group)` is the text of rx.named[i] (RE2's group number `group`), with a
// null data() when the group took no part in the match.
template <class GroupAt>
void FillMatch(const CompiledRule& c, const RuleRegexParts& rx, const GroupAt& group_at,
               RuleMatch& m) {
  m.rule = c.rule;
  std::size_t i = 0;
  for (const auto& [group, name] : rx.named) {  // sorted by name: each goes at the map's end
    const std::string_view g = group_at(i++, group);
    // Bounded: one huge line must not make huge fields, summary or keys.
    if (g.data() != nullptr) {
      m.fields.emplace_hint(m.fields.end(), name, TruncateUtf8View(g, FaultEvent::kMaxFieldBytes));
    }
  }
  ResolveOutcome(*c.rule, m);
}

}  // namespace

void RuleSet::Impl::Capture(int index, const MemoText& memo_text,
                            std::vector<RuleMatch>& out) const {
  const CompiledRule& c = compiled[static_cast<std::size_t>(index)];
  const RuleRegexParts& rx = c.regex->Get();
  const std::string_view text = memo_text.text();
  // A repeated message (a storm): RE2's answer for these very bytes, with
  // its groups, from this thread's memo (confirm_memo.h says why nothing
  // but the rule and the bytes decide it). Matches and misses alike.
  ConfirmMemo& memo = ConfirmMemo::ForThisThread();
  const bool memoise = memo.Usable(text, rx.named.size());
  const auto rule = static_cast<std::uint32_t>(index);
  const auto span_at = [text](const GroupSpan* spans) {
    return [text, spans](std::size_t i, int) {
      const GroupSpan& g = spans[i];
      return g.offset == GroupSpan::kNoGroup ? std::string_view() : text.substr(g.offset, g.size);
    };
  };
  if (memoise) {
    if (const ConfirmMemo::Result* known = memo.Find(memo_owner, rule, memo_text)) {
      if (known->matched) FillMatch(c, rx, span_at(known->spans.data()), out.emplace_back());
      return;
    }
  }
  ConfirmMemo::Result result;
  if (rx.named.empty()) {
    // Nothing to return but the match itself: RE2's DFA alone says yes or
    // no (asking for where the match is costs a second, reverse DFA pass),
    // or a search for the literals that are all the pattern is. Memoised
    // too: that DFA pass cost ~1,600 instructions a line on user-gpu at 10%.
    result.matched = c.anchored->Matches(*rx.re, text);
    if (result.matched) FillMatch(c, rx, span_at(result.spans.data()), out.emplace_back());
    if (memoise) memo.Store(memo_owner, rule, memo_text, result);
    return;
  }
  // Most lines that reach here do not match (prefilter near misses): no
  // allocation for them when the groups fit on the stack.
  constexpr std::size_t kStackGroups = 32;
  std::array<re2::StringPiece, kStackGroups> stack_groups;
  std::vector<re2::StringPiece> heap_groups;
  const std::size_t n = static_cast<std::size_t>(rx.capture_groups);
  re2::StringPiece* groups = stack_groups.data();
  if (n > kStackGroups) {
    heap_groups.resize(n);
    groups = heap_groups.data();
  }
  // With leading literals, RE2 is asked for an anchored match where one
  // occurs: the same match and groups as its unanchored search, without
  // the reverse DFA pass that finds where the match starts (on subset-a,
  // 852 ns of the 1,044 a match with its groups cost, the forward DFA alone
  // 267: anchored_capture.h). Without, RE2's unanchored search.
  result.matched = c.anchored->Match(*rx.re, text, groups, rx.capture_groups);
  if (!result.matched) {
    if (memoise) memo.Store(memo_owner, rule, memo_text, result);  // a near miss repeats too
    return;
  }
  RuleMatch& m = out.emplace_back();  // filled in place: no temporary to move and free
  if (!memoise) {
    FillMatch(
        c, rx,
        [groups](std::size_t, int group) {
          const re2::StringPiece& g = groups[static_cast<std::size_t>(group)];
          return std::string_view(g.data(), g.size());
        },
        m);
    return;
  }
  // A memoised text is at most kMaxTextBytes long: its offsets fit.
  std::size_t i = 0;
  for (const auto& named : rx.named) {
    const re2::StringPiece& g = groups[static_cast<std::size_t>(named.first)];
    if (g.data() != nullptr) {
      result.spans[i] = {static_cast<std::uint16_t>(g.data() - text.data()),
                         static_cast<std::uint16_t>(g.size())};
    }
    ++i;
  }
  FillMatch(c, rx, span_at(result.spans.data()), m);
  memo.Store(memo_owner, rule, memo_text, result);
}

void RuleSet::Impl::CaptureSetHit(int index, const MemoText& memo_text,
                                  std::vector<RuleMatch>& out) const {
  const CompiledRule& c = compiled[static_cast<std::size_t>(index)];
  const RuleRegexParts& rx = c.regex->Get();
  if (!rx.named.empty()) {
    Capture(index, memo_text, out);
    return;
  }
  // ~1,600 instructions a line on user-loose's lines (AnchoredCapture::
  // Matches' DFA pass), spent to repeat the Set's yes.
  FillMatch(
      c, rx, [](std::size_t, int) { return std::string_view(); }, out.emplace_back());
}

void RuleSet::Impl::RunSet(const RE2::Set* set, const std::vector<int>& map, std::string_view text,
                           std::vector<int>& hits) const {
  if (set) {
    std::vector<int> found;
    RE2::Set::ErrorInfo info{};
    if (simulate_dfa_out_of_memory.load(std::memory_order_relaxed)) {
      info.kind = RE2::Set::kOutOfMemory;
    } else if (set->Match(re2::StringPiece(text.data(), text.size()), &found, &info)) {
      for (int i : found) hits.push_back(map[static_cast<std::size_t>(i)]);
      return;
    }
    if (info.kind != RE2::Set::kOutOfMemory) return;  // kNoError: no match
    // The DFA ran out of memory: try each rule alone rather than report
    // "no match". Counted, so that operators can raise max_memory_bytes.
    dfa_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  for (int index : map) {
    if (RE2::PartialMatch(re2::StringPiece(text.data(), text.size()),
                          *compiled[static_cast<std::size_t>(index)].regex->Get().re)) {
      hits.push_back(index);
    }
  }
}

void RuleSet::Impl::SetHits(const OriginSet& s, Origin origin, const MemoText& memo_text,
                            std::vector<int>& hits) const {
  const std::string_view text = memo_text.text();
  ConfirmMemo& memo = ConfirmMemo::ForSetsOfThisThread();
  const bool memoise = memo.Usable(text, 0);
  const auto key = kSetMemoRule + static_cast<std::uint32_t>(OriginIndex(origin));
  if (memoise) {
    if (const ConfirmMemo::Result* known = memo.Find(memo_owner, key, memo_text)) {
      for (const GroupSpan& g : known->spans) {
        if (g.offset == GroupSpan::kNoGroup) break;
        hits.push_back(g.offset);
      }
      return;
    }
  }
  const std::size_t first = hits.size();
  RunSet(SetOf(s), s.rules, text, hits);
  std::sort(hits.begin() + static_cast<std::ptrdiff_t>(first), hits.end());  // load order
  const std::size_t found = hits.size() - first;
  if (!memoise || found > ConfirmMemo::kMaxGroups) return;
  ConfirmMemo::Result result;
  result.matched = found > 0;
  for (std::size_t k = 0; k < found; ++k) {
    const int index = hits[first + k];
    if (index >= GroupSpan::kNoGroup) return;  // does not fit: not kept
    result.spans[k].offset = static_cast<std::uint16_t>(index);
  }
  memo.Store(memo_owner, key, memo_text, result);
}

const RE2::Set* RuleSet::Impl::SetOf(const OriginSet& s) const {
  std::call_once(s.set_once, [&] {
    if (!s.set) s.set = BuildSet(s.rules, compiled, options);
  });
  return s.set.get();
}

std::unique_ptr<RuleSet::Impl> CompileRuleSet(std::vector<Rule> rules,
                                              const CompileOptions& options, Diagnostics& diags,
                                              const BuildTimeFacts& facts) {
  auto impl = std::make_unique<RuleSet::Impl>();
  impl->options = options;
  impl->literal_snapshot = facts.literals;
  impl->prefilter_db_snapshot = facts.prefilter_db;
  impl->rules = std::move(rules);
  bool failed = false;
  for (const Rule& rule : impl->rules) {
    // A built-in rule's checks passed at build time at the default limits:
    // disabled, it is never matched and needs no RE2; enabled, its RE2 is
    // built at its first use. Smaller limits than the build's could fail it
    // (E111), and any other rule may be wrong: those are checked now.
    const bool build_checked = BuildCheckHolds(rule, options);
    if (rule.disabled && build_checked) continue;
    CompiledRule c;
    c.rule = &rule;
    if (build_checked) {
      // Nothing to report: its RE2 waits for the first line that needs it
      // (rule_regex.h). A start compiled all 196, 62.6 M instructions.
      c.regex = std::make_unique<RuleRegex>(rule.pattern, BudgetOf(options));
      ++impl->regex_deferred;
    } else {
      std::size_t errors_before = diags.error_count();
      ++impl->rules_checked;
      std::unique_ptr<RE2> re = CheckRule(rule, options, diags);
      if (!re || diags.error_count() > errors_before) {
        failed = true;
        continue;
      }
      if (rule.disabled) continue;
      c.regex = std::make_unique<RuleRegex>(std::move(re));
    }
    c.anchored = std::make_unique<AnchoredCapture>();
    for (Origin o : rule.sources) c.origin_mask |= 1u << OriginIndex(o);
    impl->compiled.push_back(std::move(c));
  }
  if (failed) return nullptr;

  for (std::size_t o = 0; o < kOriginCount; ++o) {
    OriginSet& s = impl->by_origin[o];
    for (std::size_t i = 0; i < impl->compiled.size(); ++i) {
      if (o == OriginIndex(Origin::kAny) ||
          Trusts(*impl->compiled[i].rule, static_cast<Origin>(o))) {
        s.rules.push_back(static_cast<int>(i));
      }
    }
  }
  // Only `any`'s Set now, which holds every rule: if it fits, each origin's
  // (a subset) does; those are built when first matched (Impl::SetOf). And
  // not even that one when the build proved these very rules fit
  // (set_fit.h): it is built when first matched too.
  OriginSet& any = impl->by_origin[OriginIndex(Origin::kAny)];
  impl->any_set_proven =
      facts.set_fit &&
      facts.set_fit->Covers(PatternsOf(any.rules, impl->compiled), options.max_memory_bytes);
  if (!impl->any_set_proven) {
    any.set = BuildSet(any.rules, impl->compiled, options);
    if (!any.rules.empty() && !any.set) {
      diags.Error("E111", {}, "the rules do not fit in one RE2::Set within max_memory_bytes");
      return nullptr;
    }
  }
  BuildPrefilter(*impl, diags);
  return impl;
}

std::shared_ptr<const RuleSet> RuleSet::Compile(std::vector<Rule> rules,
                                                const CompileOptions& options, Diagnostics& diags) {
  std::unique_ptr<Impl> impl = CompileRuleSet(std::move(rules), options, diags, BuiltinFacts());
  if (!impl) return nullptr;
  return std::shared_ptr<const RuleSet>(new RuleSet(std::move(impl)));
}

RuleSet::RuleSet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RuleSet::~RuleSet() = default;

bool JournalConstraint::Allows(const Labels& labels) const {
  const auto in = [&labels](const char* label, const std::vector<std::string>& allowed) {
    if (allowed.empty()) return true;
    auto it = labels.find(label);
    return it != labels.end() &&
           std::find(allowed.begin(), allowed.end(), it->second) != allowed.end();
  };
  return in("unit", units) && in("uid", uids);
}

void DropUnverifiedJournalMatches(Origin origin, const Labels& labels, std::size_t first,
                                  std::vector<RuleMatch>& out) {
  if (origin != Origin::kJournal) return;
  out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                           [&labels](const RuleMatch& m) {
                             return m.rule && m.rule->journal && !m.rule->journal->Allows(labels);
                           }),
            out.end());
}

void RuleSet::Match(std::string_view text, Origin origin, std::vector<RuleMatch>& out) const {
  const OriginSet& s = impl_->by_origin[OriginIndex(origin)];
  if (s.rules.empty()) return;
  std::vector<int> hits;
  const MemoText memo_text(text);
  impl_->SetHits(s, origin, memo_text, hits);  // in load order
  for (int index : hits) impl_->CaptureSetHit(index, memo_text, out);
}

void RuleSet::MatchRecordText(std::string_view text, Origin origin,
                              std::vector<RuleMatch>& out) const {
  const OriginSet& s = impl_->by_origin[OriginIndex(origin)];
  if (s.rules.empty()) return;
  if (impl_->prefilter_on && !text.empty() && text.find('\n') == std::string_view::npos) {
    // One line: the literal prefilter names the rules that may match it, and
    // only theirs run (most lines hold no rule's literal, so nothing runs).
    // The same results as the Set over every rule (MatchCandidates' contract),
    // without the Set's DFA learning every line the agent reads: at 10,000
    // lines/s that cache was megabytes of the agent's heap. A scan of CRI
    // records through the Set was 6x slower than of the same lines plain.
    ForEachCandidate(
        text, origin,
        [&](std::string_view line, std::uint64_t, std::span<const std::uint32_t> candidates) {
          MatchCandidates(line, origin, candidates, out);
        });
  } else {  // a record of several lines (the prefilter splits at '\n'), or empty
    std::vector<int> hits;
    const MemoText memo_text(text);
    impl_->SetHits(s, origin, memo_text, hits);  // in load order
    for (int index : hits) impl_->CaptureSetHit(index, memo_text, out);
  }
}

void RuleSet::Match(const LogRecord& record, std::vector<RuleMatch>& out) const {
  const std::size_t first = out.size();
  MatchRecordText(record.text, record.origin, out);
  DropUnverifiedJournalMatches(record.origin, record.labels, first, out);
}

const std::vector<Rule>& RuleSet::rules() const { return impl_->rules; }
std::size_t RuleSet::size() const { return impl_->compiled.size(); }
std::uint64_t RuleSet::dfa_fallbacks() const {
  return impl_->dfa_fallbacks.load(std::memory_order_relaxed);
}

std::shared_ptr<const RuleSet> RuleSetTesting::CompileWithSnapshots(
    std::vector<Rule> rules, const CompileOptions& options, Diagnostics& diags,
    std::string_view literal_snapshot, std::string_view set_fit_proof) {
  std::optional<LiteralSnapshot> literals = LiteralSnapshot::Read(literal_snapshot);
  std::optional<SetFitProof> set_fit = SetFitProof::Read(set_fit_proof);
  std::unique_ptr<RuleSet::Impl> impl =
      CompileRuleSet(std::move(rules), options, diags,
                     {literals ? &*literals : nullptr, set_fit ? &*set_fit : nullptr, {}});
  if (!impl) return nullptr;
  // The set must not keep a pointer to `literals`, which dies here: its
  // literals were copied into the set by BuildPrefilter.
  impl->literal_snapshot = nullptr;
  return std::shared_ptr<const RuleSet>(new RuleSet(std::move(impl)));
}

std::shared_ptr<const RuleSet> RuleSetTesting::CompileWithPrefilterDb(
    std::vector<Rule> rules, const CompileOptions& options, Diagnostics& diags,
    std::string_view prefilter_db) {
  std::unique_ptr<RuleSet::Impl> impl =
      CompileRuleSet(std::move(rules), options, diags, {nullptr, nullptr, prefilter_db});
  if (!impl) return nullptr;
  return std::shared_ptr<const RuleSet>(new RuleSet(std::move(impl)));
}

bool RuleSetTesting::PrefilterFromSnapshot(const RuleSet& set) {
  return set.impl_->StaticPrefilter() != nullptr && set.impl_->prefilter_from_snapshot;
}

bool RuleSetTesting::SamplerFromSnapshot(const RuleSet& set) {
  return set.impl_->sampler_from_snapshot;
}

std::size_t RuleSetTesting::LiteralsFromSnapshot(const RuleSet& set) {
  return set.impl_->literals_from_snapshot;
}

std::size_t RuleSetTesting::RulesChecked(const RuleSet& set) { return set.impl_->rules_checked; }
std::size_t RuleSetTesting::RegexDeferred(const RuleSet& set) { return set.impl_->regex_deferred; }
std::size_t RuleSetTesting::RegexBuilt(const RuleSet& set) {
  return static_cast<std::size_t>(
      std::count_if(set.impl_->compiled.begin(), set.impl_->compiled.end(),
                    [](const CompiledRule& c) { return c.regex->built(); }));
}

bool RuleSetTesting::AnySetDeferred(const RuleSet& set) { return set.impl_->any_set_proven; }

bool RuleSetTesting::AnySetBuilt(const RuleSet& set) {
  return set.impl_->by_origin[OriginIndex(Origin::kAny)].set != nullptr;
}

void RuleSetTesting::SimulateDfaOutOfMemory(const RuleSet& set) {
  set.impl_->simulate_dfa_out_of_memory.store(true, std::memory_order_relaxed);
}

void RuleSetTesting::SampleBuffersFrom(const RuleSet& set, std::size_t bytes) {
  set.impl_->sample_min_bytes.store(bytes);
}

void RuleSetTesting::SearchUnfilteredFrom(const RuleSet& set, std::size_t bytes) {
  set.impl_->unfiltered_search_bytes_per_rule.store(bytes);
}

std::string RuleSetTesting::UnfilteredSearchPattern(const RuleSet& set, Origin origin) {
  const UnfilteredSearch* search = set.impl_->UnfilteredSearchOf(origin);
  return search ? search->pattern() : std::string();
}

bool RuleSetTesting::UnfilteredSearchByBytePairs(const RuleSet& set, Origin origin) {
  const UnfilteredSearch* search = set.impl_->UnfilteredSearchOf(origin);
  return search && search->by_byte_pairs();
}

std::uint64_t RuleSetTesting::SampledSwitches(const RuleSet& set) {
  return set.impl_->sampled_switches.load();
}

}  // namespace faultline
