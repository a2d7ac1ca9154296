// SPDX-License-Identifier: Apache-2.0
#include "base/suggest.h"

#include <algorithm>

namespace faultline {

// Optimal string alignment: Levenshtein plus adjacent transpositions, the
// most common typo ("tiant").
std::size_t EditDistance(std::string_view a, std::string_view b) {
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t v =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        v = std::min(v, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = v;
    }
  }
  return d[a.size() * w + b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& known) {
  // A third of the word's length (at least 1, at most 3) separates typos
  // ("sevrity") from different words ("id" vs "os").
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : known) {
    std::size_t d = EditDistance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& known) {
  std::string best = ClosestMatch(word, known);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

}  // namespace faultline
