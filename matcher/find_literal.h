// SPDX-License-Identifier: Apache-2.0
// FindLiteral: where a short literal first occurs in one log line, the
// check every candidate line pays before RE2 runs (a rule's other required
// literals, rule_scan.cc). glibc's memmem set up its search for each call
// and was 7% of `faultline scan` at 10% fault lines (bench/README.md).
#pragma once

#include <cstddef>
#include <string_view>

namespace faultline {

// The position of the first occurrence of `needle` in `haystack` at or after
// `from`, or std::string_view::npos. With `caseless`, ASCII letters match in
// either case (as RE2's (?i) does for the literals the prefilter extracts);
// other bytes match only themselves. An empty needle is found at `from`.
std::size_t FindLiteral(std::string_view haystack, std::string_view needle, bool caseless,
                        std::size_t from = 0);

}  // namespace faultline
