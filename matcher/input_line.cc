// SPDX-License-Identifier: Apache-2.0
#include "matcher/input_line.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>

#include "base/cri_line.h"
#include "base/time_format.h"
#include "matcher/journal_json_line.h"

namespace faultline {
namespace {

std::string_view StripCr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// system_clock counts nanoseconds in 64 bits: times within this many seconds
// of 1970 (about 292 years) convert without overflow.
constexpr std::int64_t kMaxClockSeconds =
    std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max())
        .count() -
    1;

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int MonthIndex(std::string_view s) {
  for (int i = 0; i < 12; ++i) {
    if (s == kMonths[i]) return i;
  }
  return -1;
}

// "HH:MM:SS" or "HH:MM:SS.ffffff" at the start of s; returns its length or 0.
std::size_t ClockLength(std::string_view s) {
  if (s.size() < 8 || !IsDigit(s[0]) || !IsDigit(s[1]) || s[2] != ':' || !IsDigit(s[3]) ||
      !IsDigit(s[4]) || s[5] != ':' || !IsDigit(s[6]) || !IsDigit(s[7])) {
    return 0;
  }
  std::size_t n = 8;
  if (n < s.size() && s[n] == '.') {
    ++n;
    while (n < s.size() && IsDigit(s[n])) ++n;
  }
  return n;
}

// "ident[pid]: msg" or "ident: msg" -> (ident, msg).
bool SplitTag(std::string_view rest, std::string_view& ident, std::string_view& msg) {
  std::size_t colon = rest.find(": ");
  std::size_t bare = rest.size() && rest.back() == ':' ? rest.size() - 1 : std::string_view::npos;
  if (colon == std::string_view::npos) colon = bare;
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view tag = rest.substr(0, colon);
  if (tag.find(' ') != std::string_view::npos) return false;
  std::size_t bracket = tag.find('[');
  if (bracket != std::string_view::npos) {
    if (tag.back() != ']') return false;
    tag = tag.substr(0, bracket);
  }
  if (tag.empty()) return false;
  ident = tag;
  msg = colon + 2 <= rest.size() ? rest.substr(colon + 2) : std::string_view();
  return true;
}

InputLine JournalRecord(LineFormat format, std::string_view ident, std::string_view message) {
  InputLine out;
  out.format = format;
  if (ident == "kernel") {
    out.origin = Origin::kKernel;
    out.text = std::string(message);
  } else {
    // The journal source rebuilds "IDENTIFIER: MESSAGE" the same way, so one
    // rule matches journalctl output and the live journal alike.
    out.origin = Origin::kJournal;
    out.text =
        ident.empty() ? std::string(message) : std::string(ident) + ": " + std::string(message);
  }
  return out;
}

}  // namespace

std::string_view LineFormatName(LineFormat format) {
  switch (format) {
    case LineFormat::kPlain:
      return "plain";
    case LineFormat::kDmesg:
      return "dmesg";
    case LineFormat::kDmesgTime:
      return "dmesg-T";
    case LineFormat::kJournalShort:
      return "journal-short";
    case LineFormat::kJournalJson:
      return "journal-json";
    case LineFormat::kCri:
      return "cri";
  }
  return "plain";
}

// dmesg -T's own layout, "Sun Nov 22 07:02:53 2026" exactly (single spaces,
// two-digit fields, a four-digit year), read by hand: strptime cost ~9,600
// instructions a line. Seconds since 1970 as timegm(strptime(...)) gives,
// nullopt for anything else (strptime then reads it, as before). As with
// strptime, the weekday is not checked against the date, and a day past the
// month's end rolls over as timegm's does.
std::optional<std::int64_t> DmesgTimeFastPath(std::string_view s) {
  static constexpr std::string_view kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  if (s.size() != 24 || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':' || s[19] != ' ') {
    return std::nullopt;
  }
  if (std::find(std::begin(kDays), std::end(kDays), s.substr(0, 3)) == std::end(kDays)) {
    return std::nullopt;
  }
  const int month = MonthIndex(s.substr(4, 3));
  const auto number = [&](std::size_t at, std::size_t width) {
    int value = 0;
    for (std::size_t i = at; i < at + width; ++i) {
      if (!IsDigit(s[i])) return -1;
      value = value * 10 + (s[i] - '0');
    }
    return value;
  };
  const int day = number(8, 2), hour = number(11, 2), minute = number(14, 2),
            second = number(17, 2), year = number(20, 4);
  if (month < 0 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60 || year < 0) {
    return std::nullopt;
  }
  using namespace std::chrono;  // NOLINT(google-build-using-namespace): local, for brevity
  const sys_days first{std::chrono::year{year} /
                       std::chrono::month{static_cast<unsigned>(month + 1)} / 1};
  const sys_days date = first + days{day - 1};
  return std::int64_t{date.time_since_epoch().count()} * 86'400 + std::int64_t{hour} * 3600 +
         std::int64_t{minute} * 60 + second;
}

std::optional<InputLine> ParseDmesgLine(std::string_view line) {
  line = StripCr(line);
  if (line.size() < 3 || line[0] != '[') return std::nullopt;
  std::size_t close = line.find(']');
  if (close == std::string_view::npos || close > 40) return std::nullopt;
  std::string_view inside = line.substr(1, close - 1);
  InputLine out;
  out.origin = Origin::kKernel;
  // "[ 1234.567890]": seconds since boot, no wall time.
  std::size_t i = 0;
  while (i < inside.size() && inside[i] == ' ') ++i;
  std::size_t digits = i;
  while (i < inside.size() && IsDigit(inside[i])) ++i;
  if (i > digits && i < inside.size() && inside[i] == '.') {
    std::size_t frac = ++i;
    while (i < inside.size() && IsDigit(inside[i])) ++i;
    if (i != inside.size() || i == frac) return std::nullopt;
    out.format = LineFormat::kDmesg;
  } else {
    // "[Sun Nov 22 07:02:53 2026]"
    std::time_t t;
    if (const std::optional<std::int64_t> fast = DmesgTimeFastPath(inside)) {
      t = static_cast<std::time_t>(*fast);
    } else {
      struct tm tm {};
      std::string copy(inside);
      const char* end = strptime(copy.c_str(), "%a %b %d %H:%M:%S %Y", &tm);
      if (!end || *end != '\0') return std::nullopt;
      t = timegm(&tm);
    }
    out.format = LineFormat::kDmesgTime;
    // from_time_t overflows past what system_clock holds (year 2262); such a
    // year (strptime reads any number) leaves the line without a time.
    if (t != -1 && t < kMaxClockSeconds && t > -kMaxClockSeconds) {
      out.time = std::chrono::system_clock::from_time_t(t);
    }
  }
  std::string_view msg = line.substr(close + 1);
  if (!msg.empty() && msg[0] == ' ') msg.remove_prefix(1);
  out.text = std::string(msg);
  return out;
}

std::optional<InputLine> ParseJournalShortLine(std::string_view line) {
  line = StripCr(line);
  std::optional<std::chrono::system_clock::time_point> time;
  std::string_view rest;
  if (line.size() > 16 && MonthIndex(line.substr(0, 3)) >= 0 && line[3] == ' ') {
    // "Nov 22 07:02:53" (short) or "Nov 22 07:02:53.123456" (short-precise); no year.
    std::size_t p = 4;
    if (line[p] == ' ') ++p;
    std::size_t day = p;
    while (p < line.size() && IsDigit(line[p])) ++p;
    if (p == day || p - day > 2 || p >= line.size() || line[p] != ' ') return std::nullopt;
    ++p;
    std::size_t clock = ClockLength(line.substr(p));
    if (clock == 0) return std::nullopt;
    p += clock;
    if (p >= line.size() || line[p] != ' ') return std::nullopt;
    rest = line.substr(p + 1);
  } else if (line.size() > 25 && IsDigit(line[0]) && line[4] == '-' && line[10] == 'T') {
    // "2026-11-22T07:02:53+0000" (short-iso) or with microseconds.
    std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    std::string stamp(line.substr(0, space));
    if (stamp.size() > 5 && (stamp[stamp.size() - 5] == '+' || stamp[stamp.size() - 5] == '-') &&
        stamp.find(':', stamp.size() - 5) == std::string::npos) {
      stamp.insert(stamp.size() - 2, ":");  // +0000 -> +00:00 for RFC 3339
    }
    time = ParseRfc3339(stamp);
    if (!time) return std::nullopt;
    rest = line.substr(space + 1);
  } else {
    return std::nullopt;
  }
  // "host ident[pid]: msg"
  std::size_t host_end = rest.find(' ');
  if (host_end == std::string_view::npos || host_end == 0) return std::nullopt;
  std::string_view ident, msg;
  if (!SplitTag(rest.substr(host_end + 1), ident, msg)) return std::nullopt;
  InputLine out = JournalRecord(LineFormat::kJournalShort, ident, msg);
  out.time = time;
  return out;
}

std::optional<InputLine> ParseJournalJsonLine(std::string_view line) {
  line = StripCr(line);
  if (line.empty() || line[0] != '{') return std::nullopt;
  std::optional<JournalJsonFields> fields = ReadJournalJsonFields(line);
  if (!fields || !fields->message) return std::nullopt;
  const std::string ident = fields->identifier.value_or(fields->comm.value_or(""));
  InputLine out;
  out.format = LineFormat::kJournalJson;
  if (fields->transport && *fields->transport == "kernel") {
    out.origin = Origin::kKernel;
    out.text = std::move(*fields->message);
  } else {
    // Only _TRANSPORT=kernel is the kernel: a user-space writer may call
    // itself "kernel".
    out.origin = Origin::kJournal;
    out.text = ident.empty() ? std::move(*fields->message) : ident + ": " + *fields->message;
  }
  if (const std::optional<std::string>& usec = fields->realtime) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(usec->c_str(), &end, 10);
    // Beyond kMaxClockSeconds the conversion to nanoseconds would overflow.
    if (end && *end == '\0' && !usec->empty() &&
        v < static_cast<unsigned long long>(kMaxClockSeconds) * 1'000'000ULL) {
      out.time = std::chrono::system_clock::time_point(
          std::chrono::duration_cast<std::chrono::system_clock::duration>(
              std::chrono::microseconds(v)));
    }
  }
  return out;
}

std::optional<InputLine> ParseCriInputLine(std::string_view line) {
  std::optional<CriLine> cri = ParseCriLine(StripCr(line));
  if (!cri) return std::nullopt;
  InputLine out;
  out.format = LineFormat::kCri;
  out.origin = Origin::kPod;
  out.time = cri->time;
  out.partial = cri->partial;
  out.stream = std::string(CriStreamName(cri->stream));
  out.text = std::string(cri->content);
  return out;
}

InputLine ParseInputLine(std::string_view line) {
  if (!line.empty()) {
    char c = line[0];
    std::optional<InputLine> parsed;
    if (c == '{') {
      parsed = ParseJournalJsonLine(line);
    } else if (c == '[') {
      parsed = ParseDmesgLine(line);
    } else if (IsDigit(c)) {
      parsed = ParseCriInputLine(line);
      if (!parsed) parsed = ParseJournalShortLine(line);
    } else if (c >= 'A' && c <= 'S') {
      parsed = ParseJournalShortLine(line);
    }
    if (parsed) return std::move(*parsed);
  }
  InputLine out;
  out.text = std::string(StripCr(line));
  return out;
}

}  // namespace faultline
