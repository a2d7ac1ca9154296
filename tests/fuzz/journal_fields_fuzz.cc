// SPDX-License-Identifier: Apache-2.0
// Journal field assembly on arbitrary data: the input is a list of
// NUL-separated "KEY=VALUE" data (the first 8 bytes, if present, are the
// realtime stamp); the assembled text must be valid UTF-8 for the JSON
// encoder, which is checked by dumping it with nlohmann::json.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collector/sources/journal_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  faultline::JournalEntry entry;
  if (input.size() >= 8) {
    std::memcpy(&entry.realtime_usec, input.data(), 8);
    input.remove_prefix(8);
  }
  while (!input.empty()) {
    const std::size_t end = input.find('\0');
    faultline::AddJournalField(input.substr(0, end), entry);
    input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
  }
  faultline::LogRecord r = faultline::AssembleJournalRecord(entry);
  nlohmann::json j = {{"text", r.text}, {"labels", r.labels}};
  (void)j.dump();  // throws (and so aborts) on invalid UTF-8
  return 0;
}
