// SPDX-License-Identifier: Apache-2.0
// Spaces off both ends of a comma-separated item, as the rule packs' key
// lists (matcher/classify.cc) and label selectors (tainter/core/label_selector.cc)
// are written: only ' ', never tabs or newlines, which are errors there.
#pragma once

#include <string_view>

namespace faultline {

inline std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace faultline
