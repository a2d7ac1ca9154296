// SPDX-License-Identifier: Apache-2.0
// Fuzzes Capture's anchored matching (matcher/anchored_capture.h): the
// input's first line is an RE2 pattern, each further line a text. Whenever
// LeadingLiterals proves literals for the pattern, the match at them must be
// exactly RE2's unanchored match, groups and all, in every ConfirmOrder; a
// difference aborts. AnchoredCapture::Matches (a literal search when the
// pattern is only literals) must say yes or no as RE2 does, for any pattern.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "matcher/anchored_capture.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  if (nl == std::string_view::npos) return 0;
  const std::string_view pattern = input.substr(0, nl);
  const std::vector<faultline::LeadingLiteral> leads = faultline::LeadingLiterals(pattern);
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);  // small programs: many executions
  const RE2 re(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re.ok()) return 0;
  // A yes or no (rules without groups): RE2's, literals alone or not.
  const faultline::AnchoredCapture capture;
  const int n = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> want(static_cast<std::size_t>(n));
  std::vector<re2::StringPiece> got(static_cast<std::size_t>(n));
  std::string_view rest = input.substr(nl + 1);
  for (;;) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    const bool want_match = re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(),
                                     RE2::UNANCHORED, want.data(), n);
    if (capture.Matches(re, line) != want_match) std::abort();
    if (leads.empty()) {
      if (end == std::string_view::npos) break;
      rest = rest.substr(end + 1);
      continue;
    }
    for (const faultline::ConfirmOrder order :
         {faultline::ConfirmOrder::kGroupsAtOnce, faultline::ConfirmOrder::kSpanFirst,
          faultline::ConfirmOrder::kRejectFirst}) {
      const bool got_match =
          faultline::MatchAtLeadingLiterals(re, leads, line, got.data(), n, order);
      if (want_match != got_match) std::abort();
      for (int g = 0; want_match && g < n; ++g) {
        const auto i = static_cast<std::size_t>(g);
        if (want[i].data() != got[i].data() || want[i].size() != got[i].size()) std::abort();
      }
    }
    if (end == std::string_view::npos) break;
    rest = rest.substr(end + 1);
  }
  return 0;
}
