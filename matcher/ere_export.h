// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// Translates an RE2 pattern into a POSIX extended regex that GNU `grep -E`
// and ripgrep (`rg -f`) both read with the same meaning for line matching:
// named and non-capturing groups become plain groups, (?i) becomes [xX]
// classes, \d \s \w become bracket classes, lazy quantifiers become greedy
// (the same lines match). Returns nullopt and sets `why` for what ERE cannot
// express (Unicode classes, \C, look-around-like flags).
std::optional<std::string> TranslateToEre(std::string_view re2_pattern, std::string* why);

}  // namespace faultline
