// SPDX-License-Identifier: Apache-2.0
// Fuzzes the `faultline scan` input parsers and whole-buffer scanning with
// the built-in packs (prefilter on): no crash, and the same matches as
// Match() line by line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "matcher/input_line.h"
#include "matcher/rule_set.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::shared_ptr<const faultline::RuleSet> set = [] {
    faultline::Diagnostics diags;
    faultline::SourceTexts texts;
    return faultline::LoadRules({}, {}, diags, texts);
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  // `faultline scan` parses every line into one reused InputLine: it must
  // hold what a fresh parse of the line gives, whatever line came before.
  faultline::InputLine reused;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? text.npos : nl - start);
    const faultline::InputLine fresh = faultline::ParseInputLine(line);
    faultline::ParseInputLine(line, reused);
    if (reused.format != fresh.format || reused.text != fresh.text ||
        reused.origin != fresh.origin || reused.time != fresh.time ||
        reused.partial != fresh.partial || reused.stream != fresh.stream) {
      std::abort();
    }
    faultline::ParseDmesgLine(line);
    faultline::ParseJournalShortLine(line);
    faultline::ParseJournalJsonLine(line);
    faultline::ParseCriInputLine(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (set) {
    std::size_t scanned = 0, direct = 0;
    set->ScanBuffer(text, faultline::Origin::kAny,
                    [&](std::string_view, std::uint64_t, std::vector<faultline::RuleMatch>& m) {
                      scanned += m.size();
                    });
    start = 0;
    std::vector<faultline::RuleMatch> out;
    while (start <= text.size()) {
      std::size_t nl = text.find('\n', start);
      out.clear();
      set->Match(text.substr(start, nl == std::string_view::npos ? text.npos : nl - start),
                 faultline::Origin::kAny, out);
      direct += out.size();
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    if (scanned != direct) std::abort();  // the prefilter lost or invented a match
  }
  return 0;
}
