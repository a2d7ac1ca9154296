// SPDX-License-Identifier: Apache-2.0
// The prefilter chosen by the input: each rule's literal set is picked by a
// static estimate of rarity (literal_prefilter.cc), which can be wrong for a
// given input ("NCCL error in:" picks " in", frequent in some logs). Before
// scanning a large buffer, its first MiB is searched for every rule's
// required sets (the plain ones and the expanded ones, literal_expansion.h),
// each rule searches for its cheapest set there, and each literal is cut
// after its rarest 8 bytes (literal_keys.h). Any required set, and any part
// of one, finds every match, so results never change; only the cost of the
// search and the number of candidate lines do.
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "matcher/literal_keys.h"
#include "matcher/prefilter_db_snapshot.h"
#include "matcher/rule_set_impl.h"
#include "matcher/sample_literals.h"

namespace faultline {
namespace {

constexpr std::size_t kSampleBytes = std::size_t{1} << 20;
// Where the 8-byte keys are counted: a quarter of the sample chose the
// same keys as all of it, at a quarter of the cost (~1 ms).
constexpr std::size_t kKeySampleBytes = std::size_t{256} << 10;
constexpr std::size_t kMaxConfirmSets = 3;

// The cost of a literal of 3 bytes or fewer, in hits per sampled MiB.
// Vectorscan's FDR (the engine for more than a few dozen literals) scores a
// bucket of literals by count^1.05 / length^3, so a short literal gets one
// of its 8 buckets to itself and the rest share 7: one zero-hit 3-byte
// literal ("Row") made the search of the 0.1% corpus 20% slower (0.078 ->
// 0.094 s on 256 MiB), about what 250 more hits per MiB cost in all.
constexpr std::uint64_t kShortLiteralCost = 256;
constexpr std::size_t kShortLiteralBytes = 3;

std::uint32_t OriginBit(Origin o) { return 1u << OriginIndex(o); }

void CountHit(void* context, unsigned id, std::uint64_t /*end*/) {
  ++(*static_cast<std::vector<std::uint64_t>*>(context))[id];
}

// Once per RuleSet, on the first sampled scan (Impl's sampling fields are
// mutable for this and written only here, under impl.sampler_once).
void BuildSampler(const RuleSet::Impl& impl) {
  std::vector<SampleRule> rules(impl.compiled.size());
  // The built-in patterns' alternative sets, extracted at build time.
  std::vector<std::optional<std::vector<std::vector<RequiredLiteral>>>> known(impl.compiled.size());
  for (std::size_t i = 0; i < impl.compiled.size(); ++i) {
    rules[i].pattern = impl.compiled[i].rule->pattern;
    rules[i].has_literals = !impl.rule_literals[i].empty();
    if (rules[i].has_literals && impl.literal_snapshot) {
      known[i] = impl.literal_snapshot->Alternatives(rules[i].pattern);
      if (known[i]) rules[i].alternatives = &*known[i];
    }
    for (const ExpandedSet& expanded : impl.rule_expanded[i]) {
      rules[i].expanded.push_back(&expanded.literals);
    }
  }
  SampleLiteralSets gathered = GatherSampleLiterals(rules);
  impl.rule_alternatives = std::move(gathered.rule_alternatives);
  impl.rule_plain_alternatives = std::move(gathered.rule_plain_alternatives);
  impl.sample_literals = std::move(gathered.literals);
  if (impl.sample_literals.empty()) return;
  // The built-in packs' were compiled at build time (prefilter_db_snapshot.h).
  impl.sampler = LoadPrefilterDb(impl.prefilter_db_snapshot, impl.sample_literals);
  impl.sampler_from_snapshot = impl.sampler != nullptr;
  if (impl.sampler) return;
  auto built = LiteralPrefilter::Build(impl.sample_literals);
  if (built.ok()) impl.sampler = std::move(*built);  // else: no sampling, the static plan
}

}  // namespace

std::string_view Head(std::string_view buffer, std::size_t bytes) {
  std::string_view head = buffer.substr(0, std::min(bytes, buffer.size()));
  if (head.size() < buffer.size()) {
    const void* nl = memrchr(head.data(), '\n', head.size());
    if (nl) head = head.substr(0, static_cast<const char*>(nl) - head.data() + 1);
  }
  return head;
}

std::unique_ptr<PrefilterPlan> SamplePrefilter(const RuleSet::Impl& impl, std::string_view buffer) {
  if (!impl.prefilter_on || buffer.empty() || buffer.size() < impl.sample_min_bytes.load()) {
    return nullptr;
  }
  std::call_once(impl.sampler_once, [&] { BuildSampler(impl); });
  if (!impl.sampler) return nullptr;
  const std::string_view sample = Head(buffer, kSampleBytes);
  std::vector<std::uint64_t> count(impl.sample_literals.size(), 0);
  if (!impl.sampler->Scan(sample, &CountHit, &count).ok()) return nullptr;

  // Per rule: the set of least cost (its literals' hits in the sample, and
  // short literals' cost to the search); among equals the one of fewer
  // literals, then the earliest (the static choice first).
  const std::size_t rules = impl.compiled.size();
  std::vector<std::size_t> pick(rules, 0);
  std::vector<std::vector<std::uint64_t>> hits(rules);
  std::size_t switched = 0;
  for (std::size_t r = 0; r < rules; ++r) {
    const auto& alternatives = impl.rule_alternatives[r];
    if (alternatives.empty()) continue;
    std::vector<std::uint64_t> cost;
    for (const std::vector<std::uint32_t>& set : alternatives) {
      std::uint64_t h = 0, c = 0;
      for (std::uint32_t id : set) {
        h += count[id];
        c += count[id];
        if (impl.sample_literals[id].text.size() <= kShortLiteralBytes) c += kShortLiteralCost;
      }
      hits[r].push_back(h);
      cost.push_back(c);
    }
    for (std::size_t k = 1; k < alternatives.size(); ++k) {
      if (std::pair(cost[k], alternatives[k].size()) <
          std::pair(cost[pick[r]], alternatives[pick[r]].size())) {
        pick[r] = k;
      }
    }
    switched += pick[r] != 0;
  }

  // Each rule's chosen literals, all cut at their rarest keys in one pass.
  std::vector<std::vector<RequiredLiteral>> chosen(rules);
  std::vector<RequiredLiteral> all;
  for (std::size_t r = 0; r < rules; ++r) {
    if (pick[r] == 0) {
      chosen[r] = impl.rule_literals[r];
    } else {
      for (std::uint32_t id : impl.rule_alternatives[r][pick[r]]) {
        chosen[r].push_back(impl.sample_literals[id]);
      }
    }
    all.insert(all.end(), chosen[r].begin(), chosen[r].end());
  }
  // Few enough literals for Teddy: each cut to end at its rarest 4 bytes
  // (what Teddy filters on); else after its rarest 8 (what FDR keys on).
  std::vector<RequiredLiteral> distinct = all;
  SortUniqueLiterals(distinct);
  const std::string_view key_sample = Head(sample, kKeySampleBytes);
  const std::vector<RequiredLiteral> keys = distinct.size() <= kTeddyMaxLiterals
                                                ? CutAtRarestEnds(all, key_sample)
                                                : CutAtRarestKeys(all, key_sample);

  auto plan = std::make_unique<PrefilterPlan>();
  plan->rule_confirm = impl.rule_confirm;
  std::map<std::pair<std::string, bool>, unsigned> ids;
  std::vector<RequiredLiteral> literals;
  std::size_t next_key = 0;  // keys[next_key] is the next chosen literal's
  for (std::size_t r = 0; r < rules; ++r) {
    const std::uint32_t mask = impl.compiled[r].origin_mask | OriginBit(Origin::kAny);
    const auto rule = static_cast<std::uint32_t>(r);
    bool cut = false;
    for (const RequiredLiteral& whole : chosen[r]) {
      const RequiredLiteral& key = keys[next_key++];
      cut |= key.text.size() != whole.text.size();
      auto [it, fresh] =
          ids.emplace(std::pair(key.text, key.caseless), static_cast<unsigned>(literals.size()));
      if (fresh) {
        literals.push_back(key);
        plan->literal_origins.push_back(0);
        plan->literal_rules.emplace_back();
      }
      plan->literal_origins[it->second] |= mask;
      std::vector<std::uint32_t>& owners = plan->literal_rules[it->second];
      if (owners.empty() || owners.back() != rule) owners.push_back(rule);
    }
    std::vector<std::vector<RequiredLiteral>>& confirm = plan->rule_confirm[r];
    if (pick[r] != 0) {
      // The other plain sets confirm a hit, the rarest in the sample first
      // (the first one missing from the line ends the check); the expanded
      // ones are checked in full anyway.
      const auto& alternatives = impl.rule_alternatives[r];
      std::vector<std::size_t> order;
      for (std::size_t k = 0; k < impl.rule_plain_alternatives[r]; ++k) {
        if (k != pick[r]) order.push_back(k);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return hits[r][a] < hits[r][b]; });
      if (order.size() > kMaxConfirmSets) order.resize(kMaxConfirmSets);
      confirm.clear();
      for (std::size_t k : order) {
        std::vector<RequiredLiteral> set;
        for (std::uint32_t id : alternatives[k]) set.push_back(impl.sample_literals[id]);
        confirm.push_back(std::move(set));
      }
    }
    // A cut literal's hits are confirmed by the whole literal, first.
    if (cut) confirm.insert(confirm.begin(), chosen[r]);
  }
  auto built = LiteralPrefilter::Build(literals);
  if (!built.ok()) return nullptr;
  plan->prefilter = std::move(*built);
  impl.sampled_switches += switched;
  return plan;
}

}  // namespace faultline
