// SPDX-License-Identifier: Apache-2.0
// Whole-buffer matching: one Vectorscan pass finds every required literal,
// hits map to lines with memchr, and only those lines reach RE2. This is
// what makes `faultline scan` fast; Match() stays the regex of record.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "matcher/count_newlines.h"
#include "matcher/prefilter_db_snapshot.h"
#include "matcher/rule_set_impl.h"

namespace faultline {
namespace {

// Piece handed to one Vectorscan call: small enough to stay in the L2
// cache, so that counting its newlines right after costs no second trip
// to memory (that second pass over the buffer was memory-bound).
constexpr std::size_t kChunk = std::size_t{256} << 10;
// Vectorscan's length is 32-bit: a longer line is cut there.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;
// Where the unfiltered search chooses its byte pairs: the buffer's first
// 256 KiB (unfiltered_search.h).
constexpr std::size_t kUnfilteredSampleBytes = std::size_t{256} << 10;

// One prefilter hit: the line it is on (offset of the line's first byte)
// and the literal.
struct Hit {
  std::size_t start;
  unsigned literal;
};

struct HitCollector {
  const char* base;
  std::size_t size;
  std::uint32_t origin_bit;
  const std::vector<std::uint32_t>* literal_origins;
  std::vector<Hit>* hits;         // appended to; lines deduplicated by `covered_until`
  std::size_t offset;             // of `base` in the whole buffer
  std::size_t line_start = 0;     // of the last candidate line, within the piece
  std::size_t covered_until = 0;  // end of the last candidate line; 0 = none yet
  bool unordered = false;
};

void OnHit(void* context, unsigned id, std::uint64_t end) {
  auto* h = static_cast<HitCollector*>(context);
  if (((*h->literal_origins)[id] & h->origin_bit) == 0) return;
  // The literal holds no newline, so its last byte is on the line we want.
  const std::size_t last = static_cast<std::size_t>(end) - 1;
  if (last >= h->line_start && last < h->covered_until) {
    // The line is already a candidate: only note the literal (once in a row).
    if (h->hits->back().literal != id) h->hits->push_back({h->offset + h->line_start, id});
    return;
  }
  const void* nl = last > 0 ? memrchr(h->base, '\n', last) : nullptr;
  std::size_t start = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - h->base) + 1 : 0;
  const void* next = std::memchr(h->base + last, '\n', h->size - last);
  std::size_t stop =
      next ? static_cast<std::size_t>(static_cast<const char*>(next) - h->base) : h->size;
  if (h->covered_until > 0 && start < h->line_start) h->unordered = true;
  h->line_start = start;
  h->covered_until = stop;  // > last >= 0
  h->hits->push_back({h->offset + start, id});
}

std::uint32_t OriginBit(Origin o) { return 1u << OriginIndex(o); }

// Whether a rule's confirm literals are worth searching on its next
// candidate line. The search costs a few hundred instructions a line; a
// near miss it stops would cost RE2 a few thousand. So it runs while it
// turns away at least one candidate in eight; below that (a 10% fault
// corpus: every "CUDA error" line is a "cuda-error" match) only one
// candidate in kProbeEvery is checked, and its outcome counts for all
// kProbeEvery, so that a run of near misses brings the search back within
// a few dozen lines. The counts halve past kWindow: recent lines decide.
class ConfirmTally {
 public:
  bool Check() {
    probing_ = checked_ >= kLearn && rejected_ * 8 < checked_;
    return !probing_ || ++skipped_ % kProbeEvery == 0;
  }
  void Record(bool passed) {
    const std::uint32_t weight = probing_ ? kProbeEvery : 1;
    checked_ += weight;
    if (!passed) rejected_ += weight;
    if (checked_ >= kWindow) {
      checked_ /= 2;
      rejected_ /= 2;
    }
  }

 private:
  static constexpr std::uint32_t kLearn = 64;
  static constexpr std::uint32_t kProbeEvery = 16;
  static constexpr std::uint32_t kWindow = 512;
  bool probing_ = false;
  std::uint32_t skipped_ = 0;
  std::uint32_t checked_ = 0;
  std::uint32_t rejected_ = 0;
};

}  // namespace

void BuildPrefilter(RuleSet::Impl& impl, Diagnostics& diags) {
  impl.rule_literals.assign(impl.compiled.size(), {});
  impl.rule_confirm.assign(impl.compiled.size(), {});
  impl.rule_expanded.assign(impl.compiled.size(), {});
  std::map<std::pair<std::string, bool>, unsigned> ids;
  std::vector<RequiredLiteral> literals;
  std::vector<std::uint32_t> origins;
  std::vector<std::vector<std::uint32_t>> literal_rules;
  for (OriginSet& s : impl.by_origin) {
    s.handles.assign(s.rules.begin(), s.rules.end());
  }
  for (std::size_t i = 0; i < impl.compiled.size(); ++i) {
    const CompiledRule& c = impl.compiled[i];
    // The built-in patterns' literals were extracted at build time; any
    // other pattern's (a user's, an edited copy's) are extracted here.
    const PatternLiterals* known =
        impl.literal_snapshot ? impl.literal_snapshot->Find(c.rule->pattern) : nullptr;
    PatternLiterals extracted;
    if (known) {
      ++impl.literals_from_snapshot;
    } else {
      extracted = ExtractPatternLiterals(c.rule->pattern);
    }
    const PatternLiterals& found = known ? *known : extracted;
    std::vector<RequiredLiteral> lits = found.required;
    if (lits.empty()) {
      diags.Warning("W202", c.rule->pattern_at,
                    "rule '" + c.rule->id +
                        "' has no literal usable by the prefilter; it runs its regex on every "
                        "line of its sources");
    }
    // Any origin query (kAny) wants every rule.
    const std::uint32_t mask = c.origin_mask | OriginBit(Origin::kAny);
    for (const RequiredLiteral& lit : lits) {
      auto [it, fresh] =
          ids.emplace(std::pair(lit.text, lit.caseless), static_cast<unsigned>(literals.size()));
      if (fresh) {
        literals.push_back(lit);
        origins.push_back(0);
        literal_rules.emplace_back();
      }
      origins[it->second] |= mask;
      std::vector<std::uint32_t>& owners = literal_rules[it->second];
      if (owners.empty() || owners.back() != i) owners.push_back(static_cast<std::uint32_t>(i));
    }
    impl.rule_confirm[i] = found.confirm;
    for (const std::vector<RequiredLiteral>& set : found.expanded) {
      impl.rule_expanded[i].push_back(MakeExpandedSet(set));
    }
    impl.rule_literals[i] = std::move(lits);
  }
  if (!impl.options.use_prefilter) return;
  // Also when no rule has a literal: a large scan then finds the lines of
  // the unfiltered rules alone (UnfilteredSearchOf).
  for (std::size_t o = 0; o < kOriginCount; ++o) {
    OriginSet& s = impl.by_origin[o];
    for (int index : s.rules) {
      if (impl.rule_literals[static_cast<std::size_t>(index)].empty()) {
        s.unfiltered.push_back(index);
      }
    }
  }
  if (literals.empty()) return;
  impl.prefilter_on = true;
  impl.prefilter_literals = std::move(literals);
  impl.literal_origins = std::move(origins);
  impl.literal_rules = std::move(literal_rules);
}

BuildTimeFacts BuiltinFacts() {
  static const std::optional<LiteralSnapshot> literals =
      LiteralSnapshot::Read(BuiltinLiteralSnapshotBytes());
  static const std::optional<SetFitProof> set_fit = SetFitProof::Read(BuiltinSetFitBytes());
  return {literals ? &*literals : nullptr, set_fit ? &*set_fit : nullptr,
          BuiltinPrefilterDbBytes()};
}

const LiteralPrefilter* RuleSet::Impl::StaticPrefilter() const {
  if (!prefilter_on) return nullptr;
  std::call_once(prefilter_once, [&] {
    // The built-in packs' literals alone: the build compiled them.
    if (!prefilter_db_snapshot.empty()) {
      prefilter = LoadPrefilterDb(prefilter_db_snapshot, prefilter_literals);
      prefilter_from_snapshot = prefilter != nullptr;
      if (prefilter) return;
    }
    auto built = LiteralPrefilter::Build(prefilter_literals);
    // Not fatal: every line then goes through RE2, as without a prefilter.
    if (built.ok()) prefilter = std::move(*built);
  });
  return prefilter.get();
}

const UnfilteredSearch* RuleSet::Impl::UnfilteredSearchOf(const OriginSet& s,
                                                          std::string_view sample) const {
  if (s.unfiltered.empty()) return nullptr;
  std::call_once(s.unfiltered_once, [&] {
    const std::vector<std::string_view> patterns = PatternsOf(s.unfiltered, compiled);
    // Null (a pattern it cannot relax, RE2's limits): every line, as before.
    s.unfiltered_search = UnfilteredSearch::Build(patterns, sample);
  });
  return s.unfiltered_search.get();
}

void RuleSet::ForEachCandidateLine(std::string_view buffer, Origin origin,
                                   const LineVisitor& visit) const {
  ForEachCandidate(buffer, origin,
                   [&](std::string_view line, std::uint64_t line_no,
                       std::span<const std::uint32_t>) { visit(line, line_no); });
}

void RuleSet::ForEachCandidate(std::string_view buffer, Origin origin,
                               const CandidateVisitor& visit) const {
  const OriginSet& s = impl_->by_origin[OriginIndex(origin)];
  if (s.rules.empty() || buffer.empty()) return;
  const char* base = buffer.data();
  const char* const end = base + buffer.size();
  auto line_end = [&](const char* p) {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    return nl ? static_cast<const char*>(nl) : end;
  };
  // The static tables, or ones chosen for the scanned buffer from a sample
  // of it.
  const std::unique_ptr<PrefilterPlan> sampled =
      impl_->prefilter_on ? SamplePrefilter(*impl_, buffer) : nullptr;
  const LiteralPrefilter* const search =
      sampled ? sampled->prefilter.get() : impl_->StaticPrefilter();
  // The rules without a literal: on a large buffer, one regex over each
  // chunk names the lines where one of them may match; else (a one-line
  // record, or no search could be built) they are candidates on every line.
  const UnfilteredSearch* const loose =
      !s.unfiltered.empty() &&
              buffer.size() / s.unfiltered.size() >=
                  impl_->unfiltered_search_bytes_per_rule.load(std::memory_order_relaxed)
          ? impl_->UnfilteredSearchOf(s, Head(buffer, kUnfilteredSampleBytes))
          : nullptr;
  if (search == nullptr && (loose == nullptr || s.unfiltered.size() != s.rules.size())) {
    std::uint64_t n = 0;
    for (const char* p = base; p < end;) {
      const char* e = line_end(p);
      visit(std::string_view(p, static_cast<std::size_t>(e - p)), ++n, s.handles);
      p = e + 1;
    }
    return;
  }

  // Per chunk (a few hundred KiB, cut after a newline): every literal hit
  // of a rule for this origin, by line, in order; then, while the chunk is
  // still in cache, line numbers counted between hits and each candidate
  // line visited with its candidate rules. (Visiting after the whole
  // buffer was scanned cost a cache miss per candidate line.)
  // `search` is null here only when every rule is unfiltered and `loose`
  // finds their lines.
  const auto& literal_origins = sampled ? sampled->literal_origins : impl_->literal_origins;
  const auto& literal_rules = sampled ? sampled->literal_rules : impl_->literal_rules;
  const auto& rule_confirm = sampled ? sampled->rule_confirm : impl_->rule_confirm;
  const std::uint32_t bit = OriginBit(origin);
  const bool any = origin == Origin::kAny;
  const bool visit_now = s.unfiltered.empty() || loose != nullptr;
  std::vector<std::size_t> loose_starts;  // of the current chunk's lines, from `loose`
  std::vector<Hit> hits;                  // of the current chunk
  std::vector<Hit> all_hits;              // of every chunk, when !visit_now
  std::vector<std::uint32_t> candidates;
  std::size_t next = 0;  // first hit of the next candidate line in `hits`
  // A rule is a candidate on `line` only if the line also holds one literal
  // of each of its confirm sets (near misses of a common literal stop here).
  // Each set is required by the pattern, so skipping the check never
  // changes a result: `tally` skips it for a rule whose hits it has not
  // been turning away (ConfirmTally).
  // Sized on first use: a one-line buffer (the agent's) mostly needs none.
  std::vector<ConfirmTally> tally;
  auto confirmed = [&](std::uint32_t r, std::string_view line) {
    const bool has_sets = !rule_confirm[r].empty() || !impl_->rule_expanded[r].empty();
    if (!has_sets) return true;
    if (tally.empty()) tally.resize(rule_confirm.size());
    if (!tally[r].Check()) return true;
    for (const std::vector<RequiredLiteral>& set : rule_confirm[r]) {
      if (std::none_of(set.begin(), set.end(),
                       [&](const RequiredLiteral& lit) { return LineHasLiteral(line, lit); })) {
        tally[r].Record(false);
        return false;
      }
    }
    for (const ExpandedSet& set : impl_->rule_expanded[r]) {
      if (!LineHasOneOf(line, set)) {
        tally[r].Record(false);
        return false;
      }
    }
    tally[r].Record(true);
    return true;
  };
  // Appends the candidates (rules of this origin owning its literals) of
  // the line at hits[next], which is `line`, and moves past it.
  auto take_line = [&](const std::vector<Hit>& from, std::string_view line) {
    const std::size_t start = from[next].start;
    for (; next < from.size() && from[next].start == start; ++next) {
      for (std::uint32_t r : literal_rules[from[next].literal]) {
        if ((any || (impl_->compiled[r].origin_mask & bit)) && confirmed(r, line)) {
          candidates.push_back(r);
        }
      }
    }
  };
  auto sorted_unique = [&] {
    if (candidates.size() > 1) {
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    }
  };
  // Vectorscan failed (out of memory for scratch): every line from `p` on
  // is a candidate for every rule.
  auto every_line_from = [&](const char* p, std::uint64_t n) {
    for (; p < end; ++n) {
      const char* e = line_end(p);
      visit(std::string_view(p, static_cast<std::size_t>(e - p)), n, s.handles);
      p = e + 1;
    }
  };

  std::uint64_t line_no = 1;
  for (std::size_t offset = 0; offset < buffer.size();) {
    std::size_t len = std::min(kChunk, buffer.size() - offset);
    if (offset + len < buffer.size()) {
      // Cut after a newline so that no line straddles two pieces.
      const void* nl = memrchr(base + offset, '\n', len);
      if (!nl) {  // a line longer than a chunk: up to its end
        const std::size_t rest = std::min(kMaxPiece, buffer.size() - offset);
        nl = std::memchr(base + offset + len, '\n', rest - len);
        len = rest;
      }
      if (nl) len = static_cast<std::size_t>(static_cast<const char*>(nl) - (base + offset)) + 1;
    }
    hits.clear();
    HitCollector h{base + offset, len, OriginBit(origin), &literal_origins, &hits, offset};
    Status st = search ? search->Scan(std::string_view(base + offset, len), &OnHit, &h) : Status();
    if (!st.ok()) {
      if (visit_now) {
        every_line_from(base + offset, line_no);
      } else {
        every_line_from(base, 1);  // nothing was visited yet
      }
      return;
    }
    if (h.unordered) {
      std::stable_sort(hits.begin(), hits.end(),
                       [](const Hit& a, const Hit& b) { return a.start < b.start; });
    }
    loose_starts.clear();
    if (loose != nullptr) loose->Lines(std::string_view(base + offset, len), loose_starts);
    const char* counted = base + offset;
    std::size_t next_loose = 0;
    // The candidate lines in order: those of literal hits and those the
    // unfiltered rules' search found, merged.
    for (next = 0; next < hits.size() || next_loose < loose_starts.size();) {
      std::size_t start = next < hits.size() ? hits[next].start : buffer.size();
      const bool is_loose =
          next_loose < loose_starts.size() && offset + loose_starts[next_loose] <= start;
      if (is_loose) start = offset + loose_starts[next_loose++];
      const char* p = base + start;
      if (p != counted) {
        line_no += CountNewlines(counted, p);
        counted = p;
      }
      if (!visit_now) {
        all_hits.push_back(hits[next++]);
        continue;
      }
      const std::string_view line(p, static_cast<std::size_t>(line_end(p) - p));
      candidates.clear();
      if (next < hits.size() && hits[next].start == start) take_line(hits, line);
      if (is_loose) {
        for (int r : s.unfiltered) candidates.push_back(static_cast<std::uint32_t>(r));
      }
      if (candidates.empty()) continue;
      sorted_unique();
      visit(line, line_no, candidates);
    }
    offset += len;
    line_no += CountNewlines(counted, base + offset);
  }
  if (visit_now) return;

  // Some rules have no literal: they run on every line, so every line is a
  // candidate. (Testing them on the raw line first is not enough: the
  // caller may match the line's message, where an anchor can match.)
  std::uint64_t n = 0;
  next = 0;
  for (const char* p = base; p < end;) {
    const char* e = line_end(p);
    ++n;
    candidates.clear();
    const std::string_view line(p, static_cast<std::size_t>(e - p));
    if (next < all_hits.size() && base + all_hits[next].start == p) take_line(all_hits, line);
    for (int r : s.unfiltered) candidates.push_back(static_cast<std::uint32_t>(r));
    sorted_unique();
    visit(line, n, candidates);
    p = e + 1;
  }
}

void RuleSet::MatchCandidates(std::string_view text, Origin origin,
                              std::span<const std::uint32_t> candidates,
                              std::vector<RuleMatch>& out) const {
  const OriginSet& s = impl_->by_origin[OriginIndex(origin)];
  if (s.rules.empty()) return;
  // Past a few rules one Set pass (one DFA over the line) beats running
  // each rule's regex in turn. So it does for two rules without a literal:
  // one search found the line for all of them (unfiltered_search.h), and
  // most of them do not match it, each after a DFA pass of its own.
  constexpr std::size_t kSetBreakEven = 6;
  constexpr std::size_t kUnfilteredSetBreakEven = 2;
  std::size_t unfiltered = 0;
  if (!s.unfiltered.empty()) {
    for (std::uint32_t index : candidates) {
      unfiltered += impl_->rule_literals[index].empty() ? 1 : 0;
    }
  }
  if (candidates.size() >= kSetBreakEven || unfiltered >= kUnfilteredSetBreakEven) {
    Match(text, origin, out);
    return;
  }
  const std::uint32_t bit = OriginBit(origin);
  const MemoText memo_text(text);  // hashed once, if a rule asks the memo
  for (std::uint32_t index : candidates) {
    if (origin != Origin::kAny && !(impl_->compiled[index].origin_mask & bit)) continue;
    impl_->Capture(static_cast<int>(index), memo_text, out);
  }
}

void RuleSet::ScanBuffer(std::string_view buffer, Origin origin,
                         const MatchVisitor& on_match) const {
  std::vector<RuleMatch> matches;
  ForEachCandidate(
      buffer, origin,
      [&](std::string_view line, std::uint64_t line_no, std::span<const std::uint32_t> candidates) {
        matches.clear();
        MatchCandidates(line, origin, candidates, matches);
        if (!matches.empty()) on_match(line, line_no, matches);
      });
}

std::vector<std::string> RuleSet::PrefilterLiterals(std::string_view id) const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < impl_->compiled.size(); ++i) {
    if (impl_->compiled[i].rule->id != id) continue;
    for (const RequiredLiteral& lit : impl_->rule_literals[i]) {
      out.push_back(lit.caseless ? "(?i)" + lit.text : lit.text);
    }
  }
  return out;
}

bool RuleSet::prefilter_active() const { return impl_->StaticPrefilter() != nullptr; }

}  // namespace faultline
