// SPDX-License-Identifier: Apache-2.0
// ParseKmsgRecord, ParseKmsgSequence and UnescapeKmsg on arbitrary bytes (the
// whole input is one raw record, as one read(2) of /dev/kmsg returns it).
// Checks invariants rather than just "no crash": unescaping never grows the
// text, and the sequence of a parsed record is the one ParseKmsgSequence sees.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collector/sources/kmsg_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64UL * 1024) return 0;  // larger than any kernel record
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  if (faultline::UnescapeKmsg(raw).size() > raw.size()) std::abort();
  faultline::Result<faultline::KmsgRecord> record = faultline::ParseKmsgRecord(raw);
  if (record.ok()) {
    if (record->priority < 0 || record->priority > 7 || record->facility < 0) std::abort();
    if (record->message.size() > raw.size()) std::abort();
    if (faultline::ParseKmsgSequence(raw) != record->sequence) std::abort();
  }
  return 0;
}
