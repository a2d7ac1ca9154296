// SPDX-License-Identifier: Apache-2.0
// ParseJournalJsonLine on one arbitrary line: what `faultline scan` does with
// `journalctl -o json` output (MESSAGE as a string, as a byte array when it
// is not UTF-8, or null; timestamps as decimal strings). scan_input_fuzz
// reaches it too, but mixed with four other formats; this target seeds it
// with real journal JSON. Beyond "no crash": a parsed line is kJournalJson
// with a kernel or journal origin, ParseInputLine picks the same reading,
// and the fast reading of the fields (simdjson, nlohmann for what it
// refuses) equals nlohmann's alone.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "matcher/input_line.h"
#include "matcher/journal_json_line.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  if (faultline::ReadJournalJsonFields(line) != faultline::ReadJournalJsonFieldsNlohmann(line)) {
    std::abort();
  }
  auto parsed = faultline::ParseJournalJsonLine(line);
  if (!parsed) return 0;
  if (parsed->format != faultline::LineFormat::kJournalJson) std::abort();
  if (parsed->origin != faultline::Origin::kKernel &&
      parsed->origin != faultline::Origin::kJournal) {
    std::abort();
  }
  const faultline::InputLine any = faultline::ParseInputLine(line);
  if (any.format != faultline::LineFormat::kJournalJson || any.text != parsed->text) std::abort();
  return 0;
}
