// SPDX-License-Identifier: Apache-2.0
// The literal sets a sampled scan counts in its sample (rule_sampling.cc):
// for each rule with a prefilter literal, every set of literals its
// pattern requires, the chosen one first. Apart from the matcher so that
// fl-snapshot-rules gathers the built-in packs' with this very code and
// compiles their database at build time (prefilter_db_snapshot.h): it
// was ~110 M instructions of every sampled scan of them (bench/README.md,
// issue 30).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// One rule as the sampler sees it.
struct SampleRule {
  std::string_view pattern;
  bool has_literals = false;  // a chosen set: else the rule is not sampled
  // ExtractAlternativeLiteralSets(pattern) when known (the build's, from
  // the literal snapshot); null: extracted here.
  const std::vector<std::vector<RequiredLiteral>>* alternatives = nullptr;
  // Its expanded sets (ExtractExpandedLiteralSets), as they confirm hits.
  std::vector<const std::vector<RequiredLiteral>*> expanded;
};

struct SampleLiteralSets {
  // Every literal of every set, each once, in the order first used.
  std::vector<RequiredLiteral> literals;
  // Per rule: its sets as ids into `literals`: its plain sets
  // (ExtractAlternativeLiteralSets, the chosen one first), then its
  // expanded sets in their search form; empty when the rule has no
  // alternative to its chosen set.
  std::vector<std::vector<std::vector<std::uint32_t>>> rule_alternatives;
  // Per rule: how many of its rule_alternatives are plain sets.
  std::vector<std::size_t> rule_plain_alternatives;
};

SampleLiteralSets GatherSampleLiterals(const std::vector<SampleRule>& rules);

}  // namespace faultline
