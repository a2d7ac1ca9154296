// SPDX-License-Identifier: Apache-2.0
// Fuzzes the rule pack loader and, when a pack loads, the compiler, the
// literal extractor and the ERE translation: none may crash or throw.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "matcher/ere_export.h"
#include "matcher/literal_prefilter.h"
#include "matcher/rule_pack.h"
#include "matcher/rule_set.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  faultline::Diagnostics diags;
  std::vector<faultline::Rule> rules = faultline::LoadRulePack(text, "fuzz.yaml", diags);
  for (const faultline::Rule& rule : rules) {
    faultline::ExtractRequiredLiterals(rule.pattern);
    std::string why;
    faultline::TranslateToEre(rule.pattern, &why);
  }
  if (!diags.has_errors() && rules.size() < 64) {
    auto set = faultline::RuleSet::Compile(std::move(rules), {}, diags);
    if (set) {
      std::vector<faultline::RuleMatch> out;
      set->Match(text, faultline::Origin::kAny, out);
    }
  }
  std::ostringstream sink;
  diags.Print(sink, {{"fuzz.yaml", text}});
  return 0;
}
