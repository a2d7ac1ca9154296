// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/journal_fields.h"

#include <cstdio>

namespace faultline {
namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0 if it is not
// one (overlong forms, surrogates and code points above U+10FFFF included).
std::size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

std::string Field(const JournalEntry& entry, std::string_view key) {
  auto it = entry.fields.find(key);
  return it == entry.fields.end() ? std::string() : it->second;
}

}  // namespace

bool AddJournalField(std::string_view datum, JournalEntry& entry) {
  const std::size_t eq = datum.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  entry.fields.emplace(std::string(datum.substr(0, eq)), std::string(datum.substr(eq + 1)));
  return true;
}

std::string EscapeInvalidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    const std::size_t n = Utf8SequenceLength(bytes);
    if (n == 0) {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(bytes[0]));
      out.append(buf, 4);
      bytes.remove_prefix(1);
    } else {
      out.append(bytes.substr(0, n));
      bytes.remove_prefix(n);
    }
  }
  return out;
}

LogRecord AssembleJournalRecord(const JournalEntry& entry) {
  LogRecord record;
  record.source = "journal";

  std::string_view message;
  if (auto it = entry.fields.find("MESSAGE"); it != entry.fields.end()) message = it->second;
  if (!message.empty() && message.back() == '\n') message.remove_suffix(1);

  const std::string identifier = Field(entry, "SYSLOG_IDENTIFIER");
  std::string text;
  if (!identifier.empty()) {
    text.reserve(identifier.size() + 2 + message.size());
    text.append(identifier).append(": ");
  }
  text.append(message);
  record.text = EscapeInvalidUtf8(text);

  const std::string transport = Field(entry, "_TRANSPORT");
  record.origin = transport == "kernel" ? Origin::kKernel : Origin::kJournal;
  // system_clock counts nanoseconds in 64 bits (until the year 2262): clamp
  // rather than overflow on a corrupt timestamp.
  constexpr std::uint64_t kMaxUsec = 9'000'000'000'000'000ULL;
  const std::uint64_t usec = entry.realtime_usec < kMaxUsec ? entry.realtime_usec : kMaxUsec;
  record.time = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::microseconds(static_cast<std::int64_t>(usec))));

  const std::pair<const char*, const char*> kLabels[] = {{"_SYSTEMD_UNIT", "unit"},
                                                         {"SYSLOG_IDENTIFIER", "identifier"},
                                                         {"_PID", "pid"},
                                                         {"_TRANSPORT", "transport"},
                                                         {"PRIORITY", "priority"},
                                                         // trusted: journald sets it
                                                         {"_UID", "uid"}};
  for (const auto& [field, label] : kLabels) {
    auto it = entry.fields.find(field);
    if (it != entry.fields.end() && !it->second.empty()) {
      record.labels[label] = EscapeInvalidUtf8(it->second);
    }
  }
  return record;
}

}  // namespace faultline
