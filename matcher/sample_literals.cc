// SPDX-License-Identifier: Apache-2.0
#include "matcher/sample_literals.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace faultline {
namespace {

// An expanded set as a scan searches for it: literals that differ only in
// their last byte, or only in their first, three or more of them (a class
// spelt out at the edge: "NCCL Error 0" ... "NCCL Error 9"), become the part
// they share. That part is required too, and one literal finds what ten
// did; the full set still confirms each hit (rule_scan.cc).
std::vector<RequiredLiteral> SearchForm(std::vector<RequiredLiteral> set) {
  for (const bool last : {true, false}) {
    auto shared = [last](const RequiredLiteral& lit) {
      return RequiredLiteral{lit.text.substr(last ? 0 : 1, lit.text.size() - 1), lit.caseless};
    };
    std::map<std::pair<std::string, bool>, int> siblings;
    for (const RequiredLiteral& lit : set) {
      RequiredLiteral part = shared(lit);
      ++siblings[{part.text, part.caseless}];
    }
    for (RequiredLiteral& lit : set) {
      const RequiredLiteral part = shared(lit);
      if (part.text.size() >= 3 && siblings[{part.text, part.caseless}] >= 3) lit = part;
    }
    SortUniqueLiterals(set);
  }
  return set;
}

}  // namespace

SampleLiteralSets GatherSampleLiterals(const std::vector<SampleRule>& rules) {
  SampleLiteralSets out;
  out.rule_alternatives.assign(rules.size(), {});
  out.rule_plain_alternatives.assign(rules.size(), 0);
  std::map<std::pair<std::string, bool>, std::uint32_t> ids;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (!rules[i].has_literals) continue;
    // The chosen set first, then the other plain ones, then the expanded.
    std::vector<std::vector<RequiredLiteral>> sets =
        rules[i].alternatives ? *rules[i].alternatives
                              : ExtractAlternativeLiteralSets(rules[i].pattern);
    const std::size_t plain = sets.size();
    for (const std::vector<RequiredLiteral>* expanded : rules[i].expanded) {
      std::vector<RequiredLiteral> set = SearchForm(*expanded);
      if (std::find(sets.begin(), sets.end(), set) == sets.end()) sets.push_back(std::move(set));
    }
    if (sets.size() < 2) continue;
    out.rule_plain_alternatives[i] = plain;
    for (const std::vector<RequiredLiteral>& set : sets) {
      std::vector<std::uint32_t> set_ids;
      for (const RequiredLiteral& lit : set) {
        auto [it, fresh] = ids.emplace(std::pair(lit.text, lit.caseless),
                                       static_cast<std::uint32_t>(out.literals.size()));
        if (fresh) out.literals.push_back(lit);
        set_ids.push_back(it->second);
      }
      out.rule_alternatives[i].push_back(std::move(set_ids));
    }
  }
  return out;
}

}  // namespace faultline
