// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// Edit distance between two byte strings, counting an adjacent swap as one.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The entry of `known` closest to `word` if it is close enough to be what the
// writer meant (a typo, not another word), else "". For "did you mean" hints.
std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& known);

// "; did you mean 'severity'?" or "" when nothing is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& known);

}  // namespace faultline
