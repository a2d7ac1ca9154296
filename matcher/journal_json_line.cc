// SPDX-License-Identifier: Apache-2.0
#include "matcher/journal_json_line.h"

#include <simdjson.h>

#include <cstring>

#include <nlohmann/json.hpp>

namespace faultline {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// The field a key names, or nullptr for a key this reader ignores.
std::optional<std::string>* Slot(JournalJsonFields& f, std::string_view key) {
  if (key == "MESSAGE") return &f.message;
  if (key == "_TRANSPORT") return &f.transport;
  if (key == "SYSLOG_IDENTIFIER") return &f.identifier;
  if (key == "_COMM") return &f.comm;
  if (key == "__REALTIME_TIMESTAMP") return &f.realtime;
  return nullptr;
}

std::optional<std::string> NlohmannString(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return std::nullopt;
  std::string bytes;
  for (const auto& b : v) {
    if (!b.is_number_unsigned() || b.get<std::uint64_t>() > 255) return std::nullopt;
    bytes += static_cast<char>(b.get<std::uint64_t>());
  }
  return bytes;
}

}  // namespace

std::optional<JournalJsonFields> ReadJournalJsonFields(std::string_view line) {
  // simdjson reads SIMDJSON_PADDING bytes past the end: the line is copied
  // into a buffer kept for the thread, with the parser.
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;
  if (padded.size() < line.size() + simdjson::SIMDJSON_PADDING) {
    padded.resize(line.size() + simdjson::SIMDJSON_PADDING);
  }
  std::memcpy(padded.data(), line.data(), line.size());
  element doc;
  if (parser.parse(padded.data(), line.size(), /*realloc_if_needed=*/false).get(doc) !=
      simdjson::SUCCESS) {
    return ReadJournalJsonFieldsNlohmann(line);  // invalid, or JSON simdjson does not take
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;  // not an object
  JournalJsonFields out;
  for (simdjson::dom::key_value_pair member : object) {
    std::optional<std::string>* slot = Slot(out, member.key);
    if (slot == nullptr) continue;
    if (member.value.type() == element_type::ARRAY) {
      // A value journalctl printed as bytes (not UTF-8): rare, and nlohmann
      // tells a byte from what simdjson reads alike ("-0" is no byte).
      return ReadJournalJsonFieldsNlohmann(line);
    }
    *slot = member.value.type() == element_type::STRING
                ? std::optional<std::string>(member.value.get_string().value_unsafe())
                : std::nullopt;
  }
  return out;
}

std::optional<JournalJsonFields> ReadJournalJsonFieldsNlohmann(std::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  JournalJsonFields out;
  for (const auto& [key, value] : j.items()) {
    if (std::optional<std::string>* slot = Slot(out, key)) *slot = NlohmannString(value);
  }
  return out;
}

}  // namespace faultline
