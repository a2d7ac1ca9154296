// SPDX-License-Identifier: Apache-2.0
// The fields `faultline scan` reads from one line of `journalctl -o json`:
// simdjson for a valid line (nlohmann's parse of every line was three
// quarters of such a scan), nlohmann for what simdjson refuses (a number
// past 64 bits, deep nesting), so that every line reads as it always did.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace faultline {

// A journal record's fields as strings: a JSON string, or an array of bytes
// (journalctl's form for a value that is not UTF-8). A field that is absent,
// or of another type, or an array holding anything but 0..255, is nullopt.
// The last of a repeated key counts (nlohmann keeps the last).
struct JournalJsonFields {
  std::optional<std::string> message;
  std::optional<std::string> transport;
  std::optional<std::string> identifier;  // SYSLOG_IDENTIFIER
  std::optional<std::string> comm;        // _COMM
  std::optional<std::string> realtime;    // __REALTIME_TIMESTAMP, microseconds
  bool operator==(const JournalJsonFields&) const = default;
};

// The fields of `line`, or nullopt when it is not a JSON object.
std::optional<JournalJsonFields> ReadJournalJsonFields(std::string_view line);

// The same with nlohmann alone: the reading of record, which the fast one
// must equal (tests and journal_json_fuzz compare them).
std::optional<JournalJsonFields> ReadJournalJsonFieldsNlohmann(std::string_view line);

}  // namespace faultline
