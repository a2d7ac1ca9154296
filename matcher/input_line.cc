// SPDX-License-Identifier: Apache-2.0
#include "matcher/input_line.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdint>
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

// A three-letter name's bytes as one number, for comparing names by one
// integer compare each.
constexpr std::uint32_t Key3(std::string_view s) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(s[0])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[2]));
}

constexpr std::array<std::uint32_t, 12> kMonthKeys = [] {
  std::array<std::uint32_t, 12> keys{};
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = Key3(kMonths[i]);
  return keys;
}();

// Twelve integer compares: comparing string_views, the month of every
// candidate journal line cost ~600 instructions (callgrind, user-gpu's 10%
// corpus; bench/README.md, round 7).
int MonthIndex(std::string_view s) {
  if (s.size() != 3) return -1;
  const std::uint32_t key = Key3(s);
  for (std::size_t i = 0; i < kMonthKeys.size(); ++i) {
    if (kMonthKeys[i] == key) return static_cast<int>(i);
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
    // A pid is ASCII (journalctl prints digits). Bytes past it would be cut
    // from the message unseen by the search for rules without a literal,
    // whose "[pid]" is RE2's [^ \n]*, which matches no byte that is not
    // UTF-8 (unfiltered_search.cc): such a line stays whole instead.
    for (const char c : tag.substr(bracket)) {
      if (static_cast<unsigned char>(c) >= 0x80) return false;
    }
    tag = tag.substr(0, bracket);
  }
  if (tag.empty()) return false;
  ident = tag;
  msg = colon + 2 <= rest.size() ? rest.substr(colon + 2) : std::string_view();
  return true;
}

// Every member of `out` but `time` set for a journal record (`out`'s
// buffers reused).
void JournalRecordInto(LineFormat format, std::string_view ident, std::string_view message,
                       InputLine& out) {
  out.format = format;
  out.partial = false;
  out.stream.clear();
  if (ident == "kernel") {
    out.origin = Origin::kKernel;
    out.text.assign(message);
  } else {
    // The journal source rebuilds "IDENTIFIER: MESSAGE" the same way, so one
    // rule matches journalctl output and the live journal alike.
    out.origin = Origin::kJournal;
    if (ident.empty()) {
      out.text.assign(message);
    } else {
      out.text.assign(ident).append(": ").append(message);
    }
  }
}

// Each parser below, in its `...Into` form, fills every member of `out`
// and returns true when `line` is of its format; false, and `out` in an
// unspecified state, otherwise. Filling one InputLine line after line keeps
// its strings' buffers: a scan parsed each candidate line into a new one,
// an allocation and a free per line, besides the moves out of optionals.
template <bool (*Into)(std::string_view, InputLine&)>
std::optional<InputLine> Parsed(std::string_view line) {
  InputLine out;
  if (!Into(line, out)) return std::nullopt;
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

namespace {

bool DmesgLineInto(std::string_view line, InputLine& out) {
  line = StripCr(line);
  if (line.size() < 3 || line[0] != '[') return false;
  std::size_t close = line.find(']');
  if (close == std::string_view::npos || close > 40) return false;
  std::string_view inside = line.substr(1, close - 1);
  out.origin = Origin::kKernel;
  out.time.reset();
  out.partial = false;
  out.stream.clear();
  // "[ 1234.567890]": seconds since boot, no wall time.
  std::size_t i = 0;
  while (i < inside.size() && inside[i] == ' ') ++i;
  std::size_t digits = i;
  while (i < inside.size() && IsDigit(inside[i])) ++i;
  if (i > digits && i < inside.size() && inside[i] == '.') {
    std::size_t frac = ++i;
    while (i < inside.size() && IsDigit(inside[i])) ++i;
    if (i != inside.size() || i == frac) return false;
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
      if (!end || *end != '\0') return false;
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
  out.text.assign(msg);
  return true;
}

bool JournalShortLineInto(std::string_view line, InputLine& out) {
  line = StripCr(line);
  std::optional<std::chrono::system_clock::time_point> time;
  std::string_view rest;
  if (line.size() > 16 && MonthIndex(line.substr(0, 3)) >= 0 && line[3] == ' ') {
    // "Nov 22 07:02:53" (short) or "Nov 22 07:02:53.123456" (short-precise); no year.
    std::size_t p = 4;
    if (line[p] == ' ') ++p;
    std::size_t day = p;
    while (p < line.size() && IsDigit(line[p])) ++p;
    if (p == day || p - day > 2 || p >= line.size() || line[p] != ' ') return false;
    ++p;
    std::size_t clock = ClockLength(line.substr(p));
    if (clock == 0) return false;
    p += clock;
    if (p >= line.size() || line[p] != ' ') return false;
    rest = line.substr(p + 1);
  } else if (line.size() > 25 && IsDigit(line[0]) && line[4] == '-' && line[10] == 'T') {
    // "2026-11-22T07:02:53+0000" (short-iso) or with microseconds.
    std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return false;
    const std::string_view stamp = line.substr(0, space);
    if (stamp.size() > 5 && (stamp[stamp.size() - 5] == '+' || stamp[stamp.size() - 5] == '-') &&
        stamp.find(':', stamp.size() - 5) == std::string_view::npos) {
      // +0000 -> +00:00 for RFC 3339, on the stack when it fits (any
      // stamp ParseRfc3339 reads with up to 9 fractional digits does).
      std::array<char, 64> on_stack;
      std::string on_heap;
      char* colon = on_stack.data();
      if (stamp.size() + 1 > on_stack.size()) {
        on_heap.resize(stamp.size() + 1);
        colon = on_heap.data();
      }
      const std::size_t zone_minutes = stamp.size() - 2;
      std::memcpy(colon, stamp.data(), zone_minutes);
      colon[zone_minutes] = ':';
      std::memcpy(colon + zone_minutes + 1, stamp.data() + zone_minutes, 2);
      time = ParseRfc3339(std::string_view(colon, stamp.size() + 1));
    } else {
      time = ParseRfc3339(stamp);
    }
    if (!time) return false;
    rest = line.substr(space + 1);
  } else {
    return false;
  }
  // "host ident[pid]: msg"
  std::size_t host_end = rest.find(' ');
  if (host_end == std::string_view::npos || host_end == 0) return false;
  std::string_view ident, msg;
  if (!SplitTag(rest.substr(host_end + 1), ident, msg)) return false;
  JournalRecordInto(LineFormat::kJournalShort, ident, msg, out);
  out.time = time;
  return true;
}

bool JournalJsonLineInto(std::string_view line, InputLine& out) {
  line = StripCr(line);
  if (line.empty() || line[0] != '{') return false;
  std::optional<JournalJsonFields> fields = ReadJournalJsonFields(line);
  if (!fields || !fields->message) return false;
  const std::string ident = fields->identifier.value_or(fields->comm.value_or(""));
  out.format = LineFormat::kJournalJson;
  out.time.reset();
  out.partial = false;
  out.stream.clear();
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
  return true;
}

bool CriInputLineInto(std::string_view line, InputLine& out) {
  std::optional<CriLine> cri = ParseCriLine(StripCr(line));
  if (!cri) return false;
  out.format = LineFormat::kCri;
  out.origin = Origin::kPod;
  out.time = cri->time;
  out.partial = cri->partial;
  out.stream.assign(CriStreamName(cri->stream));
  out.text.assign(cri->content);
  return true;
}

}  // namespace

std::optional<InputLine> ParseDmesgLine(std::string_view line) {
  return Parsed<DmesgLineInto>(line);
}
std::optional<InputLine> ParseJournalShortLine(std::string_view line) {
  return Parsed<JournalShortLineInto>(line);
}
std::optional<InputLine> ParseJournalJsonLine(std::string_view line) {
  return Parsed<JournalJsonLineInto>(line);
}
std::optional<InputLine> ParseCriInputLine(std::string_view line) {
  return Parsed<CriInputLineInto>(line);
}

void ParseInputLine(std::string_view line, InputLine& out) {
  if (!line.empty()) {
    const char c = line[0];
    if (c == '{') {
      if (JournalJsonLineInto(line, out)) return;
    } else if (c == '[') {
      if (DmesgLineInto(line, out)) return;
    } else if (IsDigit(c)) {
      if (CriInputLineInto(line, out) || JournalShortLineInto(line, out)) return;
    } else if (c >= 'A' && c <= 'S') {
      if (JournalShortLineInto(line, out)) return;
    }
  }
  out.format = LineFormat::kPlain;
  out.origin = Origin::kAny;
  out.time.reset();
  out.partial = false;
  out.stream.clear();
  out.text.assign(StripCr(line));
}

InputLine ParseInputLine(std::string_view line) {
  InputLine out;
  ParseInputLine(line, out);
  return out;
}

}  // namespace faultline
