// SPDX-License-Identifier: Apache-2.0
// The prefilter chosen by the input: each rule's literal set is picked by a
// static estimate of rarity (literal_prefilter.cc), which can be wrong for a
// given input ("NCCL error in:" picks " in", frequent in some logs). Before
// scanning a large buffer, its first MiB is searched for every rule's
// alternative sets, and a rule whose chosen set is much more common there
// than an alternative searches for the alternative instead. Any required
// set finds every match, so results never change; only the number of
// candidate lines (and of prefilter hits) does.
#include <algorithm>
#include <cstring>
#include <map>

#include "matcher/rule_set_impl.h"

namespace faultline {
namespace {

constexpr std::size_t kSampleBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxConfirmSets = 3;

std::uint32_t OriginBit(Origin o) { return 1u << OriginIndex(o); }

void CountHit(void* context, unsigned id, std::uint64_t /*end*/) {
  ++(*static_cast<std::vector<std::uint64_t>*>(context))[id];
}

// Once per RuleSet, on the first sampled scan (Impl's sampling fields are
// mutable for this and written only here, under impl.sampler_once).
void BuildSampler(const RuleSet::Impl& impl) {
  impl.rule_alternatives.assign(impl.compiled.size(), {});
  std::map<std::pair<std::string, bool>, std::uint32_t> ids;
  for (std::size_t i = 0; i < impl.compiled.size(); ++i) {
    if (impl.rule_literals[i].empty()) continue;
    std::vector<std::vector<RequiredLiteral>> sets =
        ExtractAlternativeLiteralSets(impl.compiled[i].rule->pattern);
    if (sets.size() < 2) continue;
    for (const std::vector<RequiredLiteral>& set : sets) {
      std::vector<std::uint32_t> set_ids;
      for (const RequiredLiteral& lit : set) {
        auto [it, fresh] = ids.emplace(std::pair(lit.text, lit.caseless),
                                       static_cast<std::uint32_t>(impl.sample_literals.size()));
        if (fresh) impl.sample_literals.push_back(lit);
        set_ids.push_back(it->second);
      }
      impl.rule_alternatives[i].push_back(std::move(set_ids));
    }
  }
  if (impl.sample_literals.empty()) return;
  auto built = LiteralPrefilter::Build(impl.sample_literals);
  if (built.ok()) impl.sampler = std::move(*built);  // else: no sampling, the static plan
}

}  // namespace

std::unique_ptr<PrefilterPlan> SamplePrefilter(const RuleSet::Impl& impl, std::string_view buffer) {
  if (!impl.prefilter || buffer.empty() || buffer.size() < impl.sample_min_bytes.load()) {
    return nullptr;
  }
  std::call_once(impl.sampler_once, [&] { BuildSampler(impl); });
  if (!impl.sampler) return nullptr;
  // The first MiB, cut after a newline.
  std::string_view sample = buffer.substr(0, std::min(kSampleBytes, buffer.size()));
  if (sample.size() < buffer.size()) {
    const void* nl = memrchr(sample.data(), '\n', sample.size());
    if (nl) sample = sample.substr(0, static_cast<const char*>(nl) - sample.data() + 1);
  }
  std::vector<std::uint64_t> count(impl.sample_literals.size(), 0);
  if (!impl.sampler->Scan(sample, &CountHit, &count).ok()) return nullptr;

  // Per rule: the alternative with the fewest hits, if it has notably
  // fewer than the chosen one (alternative 0): at most half, and at least
  // 8 fewer per sampled MiB, so that a rebuild is worth its few ms.
  const std::size_t rules = impl.compiled.size();
  std::vector<int> pick(rules, 0);
  std::vector<std::vector<std::uint64_t>> costs(rules);
  std::size_t switched = 0;
  for (std::size_t r = 0; r < rules; ++r) {
    const auto& alternatives = impl.rule_alternatives[r];
    if (alternatives.empty()) continue;
    for (const std::vector<std::uint32_t>& set : alternatives) {
      std::uint64_t c = 0;
      for (std::uint32_t id : set) c += count[id];
      costs[r].push_back(c);
    }
    const auto best = std::min_element(costs[r].begin(), costs[r].end()) - costs[r].begin();
    if (best != 0 && costs[r][best] * 2 <= costs[r][0] && costs[r][0] - costs[r][best] >= 8) {
      pick[r] = static_cast<int>(best);
      ++switched;
    }
  }
  if (switched == 0) return nullptr;

  auto plan = std::make_unique<PrefilterPlan>();
  plan->rule_confirm = impl.rule_confirm;
  std::map<std::pair<std::string, bool>, unsigned> ids;
  std::vector<RequiredLiteral> literals;
  auto use = [&](const RequiredLiteral& lit, std::uint32_t rule, std::uint32_t mask) {
    auto [it, fresh] =
        ids.emplace(std::pair(lit.text, lit.caseless), static_cast<unsigned>(literals.size()));
    if (fresh) {
      literals.push_back(lit);
      plan->literal_origins.push_back(0);
      plan->literal_rules.emplace_back();
    }
    plan->literal_origins[it->second] |= mask;
    std::vector<std::uint32_t>& owners = plan->literal_rules[it->second];
    if (owners.empty() || owners.back() != rule) owners.push_back(rule);
  };
  for (std::size_t r = 0; r < rules; ++r) {
    const std::uint32_t mask = impl.compiled[r].origin_mask | OriginBit(Origin::kAny);
    const auto rule = static_cast<std::uint32_t>(r);
    if (pick[r] == 0) {
      for (const RequiredLiteral& lit : impl.rule_literals[r]) use(lit, rule, mask);
      continue;
    }
    const auto& alternatives = impl.rule_alternatives[r];
    for (std::uint32_t id : alternatives[static_cast<std::size_t>(pick[r])]) {
      use(impl.sample_literals[id], rule, mask);
    }
    // The other sets confirm a hit, the rarest in the sample first (the
    // first one missing from the line ends the check).
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < alternatives.size(); ++k) {
      if (static_cast<int>(k) != pick[r]) order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return costs[r][a] < costs[r][b]; });
    if (order.size() > kMaxConfirmSets) order.resize(kMaxConfirmSets);
    std::vector<std::vector<RequiredLiteral>>& confirm = plan->rule_confirm[r];
    confirm.clear();
    for (std::size_t k : order) {
      std::vector<RequiredLiteral> set;
      for (std::uint32_t id : alternatives[k]) set.push_back(impl.sample_literals[id]);
      confirm.push_back(std::move(set));
    }
  }
  auto built = LiteralPrefilter::Build(literals);
  if (!built.ok()) return nullptr;
  plan->prefilter = std::move(*built);
  impl.sampled_switches += switched;
  return plan;
}

}  // namespace faultline
