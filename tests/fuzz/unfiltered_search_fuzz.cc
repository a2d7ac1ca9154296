// SPDX-License-Identifier: Apache-2.0
// Fuzzes the search for rules without a prefilter literal
// (matcher/unfiltered_search.h): the input's first line is an RE2 pattern,
// the rest a log text. Whenever the search builds, every line whose
// message (as `faultline scan` reads it) the pattern matches must be among
// the lines it names, and those must be line starts, ascending; so must
// the lines of each of the pattern's byte-pair choices (byte_pairs.h),
// which the search picks from by a sample. A difference aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "matcher/byte_pairs.h"
#include "matcher/input_line.h"
#include "matcher/unfiltered_search.h"
#include "tests/fuzz/pattern_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<faultline::PatternInput> in = faultline::ReadPatternInput(data, size);
  if (!in) return 0;
  const std::string_view pattern = in->pattern;
  const RE2& re = *in->re;
  const std::vector<std::string_view> patterns = {pattern};
  const std::string_view text = in->text;
  // The text as the sample, or none (the first choice of pairs).
  const auto search = faultline::UnfilteredSearch::Build(patterns, size % 2 ? text : "");
  if (!search) return 0;
  std::vector<std::vector<std::size_t>> by_choice;
  for (const auto& choice : faultline::BytePairChoices(pattern)) {
    std::vector<std::size_t>& marked = by_choice.emplace_back();
    faultline::BytePairLines(choice).ForEachLine(
        text, [&](std::size_t start, std::size_t) { marked.push_back(start); });
  }
  std::vector<std::size_t> starts;
  search->Lines(text, starts);
  if (!std::is_sorted(starts.begin(), starts.end())) std::abort();
  if (std::adjacent_find(starts.begin(), starts.end()) != starts.end()) std::abort();
  for (std::size_t s : starts) {
    if (s >= text.size() || (s > 0 && text[s - 1] != '\n')) std::abort();  // not a line start
  }
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const faultline::InputLine in = faultline::ParseInputLine(text.substr(start, end - start));
    if (RE2::PartialMatch(in.text, re)) {
      if (!std::binary_search(starts.begin(), starts.end(), start)) {
        std::abort();  // a line with a match was not named
      }
      for (const std::vector<std::size_t>& marked : by_choice) {
        if (!std::binary_search(marked.begin(), marked.end(), start)) std::abort();
      }
    }
    start = end + 1;
  }
  return 0;
}
