// SPDX-License-Identifier: Apache-2.0
// Fuzzes required-literal extraction (matcher/literal_prefilter.h): the
// input's first line is an RE2 pattern, each further line a text. For every
// text the pattern matches, each set the prefilter may search for (the
// chosen one, each confirm set, each alternative a sampled scan may pick)
// must have a literal on that text, or the prefilter would drop a match.
// A set without one aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "matcher/literal_prefilter.h"
#include "tests/fuzz/pattern_input.h"

namespace {

bool HoldsOne(std::string_view text, const std::vector<faultline::RequiredLiteral>& set) {
  for (const faultline::RequiredLiteral& lit : set) {
    if (faultline::LineHasLiteral(text, lit)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<faultline::PatternInput> in = faultline::ReadPatternInput(data, size);
  if (!in) return 0;
  const std::string_view pattern = in->pattern;
  const RE2& re = *in->re;
  std::vector<std::vector<faultline::RequiredLiteral>> sets;
  // As a RuleSet extracts them (literal_snapshot.cc's ExtractPatternLiterals).
  faultline::RequiredAndConfirmLiterals found =
      faultline::ExtractRequiredAndConfirmLiterals(pattern);
  if (found.required.empty()) return 0;
  sets.push_back(std::move(found.required));
  for (auto& set : found.confirm) sets.push_back(std::move(set));
  for (auto& set : faultline::ExtractAlternativeLiteralSets(pattern)) {
    sets.push_back(std::move(set));
  }
  const std::string_view lines = in->text;
  for (std::size_t start = 0; start <= lines.size();) {
    std::size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    const std::string_view text = lines.substr(start, end - start);
    if (RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), re)) {
      for (const auto& set : sets) {
        if (!HoldsOne(text, set)) std::abort();  // a match the prefilter would drop
      }
    }
    start = end + 1;
  }
  return 0;
}
