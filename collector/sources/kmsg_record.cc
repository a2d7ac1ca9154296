// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/kmsg_record.h"

#include <charconv>
#include <limits>

namespace faultline {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Strict decimal: digits only, the whole field, no sign, no overflow.
template <typename T>
bool ParseDecimal(std::string_view field, T* value) {
  if (field.empty()) return false;
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

// Splits off the next comma-separated field of the prefix.
std::string_view NextField(std::string_view& prefix) {
  std::size_t comma = prefix.find(',');
  std::string_view field = prefix.substr(0, comma);
  prefix = comma == std::string_view::npos ? std::string_view() : prefix.substr(comma + 1);
  return field;
}

}  // namespace

std::string UnescapeKmsg(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x') {
      int hi = HexValue(text[i + 2]);
      int lo = HexValue(text[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

std::optional<std::uint64_t> ParseKmsgSequence(std::string_view raw) {
  std::string_view prefix = raw.substr(0, raw.find_first_of(";\n"));
  NextField(prefix);  // priority
  std::uint64_t sequence = 0;
  if (!ParseDecimal(NextField(prefix), &sequence)) return std::nullopt;
  return sequence;
}

Result<KmsgRecord> ParseKmsgRecord(std::string_view raw) {
  // The record's first line is "prefix;message"; every further line is a
  // continuation. The kernel escapes '\n' inside messages, so a raw newline
  // always ends a line.
  std::size_t eol = raw.find('\n');
  std::string_view first = raw.substr(0, eol);
  std::string_view rest = eol == std::string_view::npos ? std::string_view() : raw.substr(eol + 1);

  std::size_t semi = first.find(';');
  if (semi == std::string_view::npos) {
    return InvalidArgumentError("kmsg record has no ';' after its prefix");
  }
  std::string_view prefix = first.substr(0, semi);

  KmsgRecord record;
  unsigned prio_fac = 0;
  if (!ParseDecimal(NextField(prefix), &prio_fac) || prio_fac > 1023) {
    return InvalidArgumentError("kmsg record has a bad priority field");
  }
  record.facility = static_cast<int>(prio_fac >> 3);
  record.priority = static_cast<int>(prio_fac & 7);
  if (!ParseDecimal(NextField(prefix), &record.sequence)) {
    return InvalidArgumentError("kmsg record has a bad sequence field");
  }
  std::uint64_t usec = 0;
  if (!ParseDecimal(NextField(prefix), &usec) ||
      usec > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return InvalidArgumentError("kmsg record has a bad timestamp field");
  }
  record.since_boot = std::chrono::microseconds(static_cast<std::int64_t>(usec));
  // The flags field and anything after it are informational; a prefix may
  // also end right after the timestamp in old kernels.

  record.message = UnescapeKmsg(first.substr(semi + 1));

  while (!rest.empty()) {
    std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty() || line.front() != ' ') continue;
    line.remove_prefix(1);
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    record.dict.emplace_back(UnescapeKmsg(line.substr(0, eq)), UnescapeKmsg(line.substr(eq + 1)));
  }
  return record;
}

}  // namespace faultline
