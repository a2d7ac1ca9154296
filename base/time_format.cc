// SPDX-License-Identifier: Apache-2.0
#include "base/time_format.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace faultline {
namespace {

bool ReadDigits(std::string_view text, std::size_t pos, std::size_t count, int* out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return true;
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's
// days_from_civil), so parsing needs neither timegm nor the TZ environment.
std::int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

}  // namespace

char* WriteRfc3339(char* p, std::chrono::system_clock::time_point t) {
  using namespace std::chrono;  // NOLINT(google-build-using-namespace): local, for brevity
  const auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::int64_t secs = us / 1'000'000;
  std::int64_t frac = us % 1'000'000;
  if (frac < 0) {
    frac += 1'000'000;
    secs -= 1;
  }
  // Years 1970-9999, every event's: the civil date by <chrono>'s calendar
  // and the digits written by hand (gmtime_r and snprintf were ~3,800
  // instructions a call, twice per event written). Same text as below.
  if (secs >= 0 && secs < 253'402'300'800) {
    const sys_days day{days{secs / 86'400}};
    const year_month_day date{day};
    std::int64_t in_day = secs % 86'400;
    char buf[] = "0000-00-00T00:00:00.000000Z";
    const auto put = [&](int at, int width, std::int64_t value) {
      for (int i = at + width - 1; i >= at; --i, value /= 10) {
        buf[i] = static_cast<char>('0' + value % 10);
      }
    };
    put(0, 4, static_cast<int>(date.year()));
    put(5, 2, static_cast<unsigned>(date.month()));
    put(8, 2, static_cast<unsigned>(date.day()));
    put(11, 2, in_day / 3600);
    put(14, 2, in_day / 60 % 60);
    put(17, 2, in_day % 60);
    put(20, 6, frac);
    std::memcpy(p, buf, sizeof(buf) - 1);
    return p + sizeof(buf) - 1;
  }
  std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  // At most 4 + 10 digits of year and 22 more bytes: within kRfc3339Bound.
  const int n = std::snprintf(p, kRfc3339Bound, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                              tm.tm_sec, static_cast<long long>(frac));
  return p + std::clamp(n, 0, static_cast<int>(kRfc3339Bound) - 1);
}

void AppendRfc3339(std::string& out, std::chrono::system_clock::time_point t) {
  char buf[kRfc3339Bound];
  out.append(buf, WriteRfc3339(buf, t));
}

std::string FormatRfc3339(std::chrono::system_clock::time_point t) {
  std::string out;
  AppendRfc3339(out, t);
  return out;
}

std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text) {
  int year, month, day, hour, minute, second;
  if (text.size() < 20) return std::nullopt;
  if (!ReadDigits(text, 0, 4, &year) || text[4] != '-' || !ReadDigits(text, 5, 2, &month) ||
      text[7] != '-' || !ReadDigits(text, 8, 2, &day) || (text[10] != 'T' && text[10] != 't') ||
      !ReadDigits(text, 11, 2, &hour) || text[13] != ':' || !ReadDigits(text, 14, 2, &minute) ||
      text[16] != ':' || !ReadDigits(text, 17, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 9) {
        nanos = nanos * 10 + (text[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  if (pos >= text.size()) return std::nullopt;
  std::int64_t offset_seconds = 0;
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
  } else if (text[pos] == '+' || text[pos] == '-') {
    int oh, om;
    if (!ReadDigits(text, pos + 1, 2, &oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !ReadDigits(text, pos + 4, 2, &om)) {
      return std::nullopt;
    }
    offset_seconds = std::int64_t{oh * 3600 + om * 60} * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  const std::int64_t secs = DaysFromCivil(year, month, day) * 86400 + std::int64_t{hour} * 3600 +
                            std::int64_t{minute} * 60 + second - offset_seconds;
  // system_clock counts nanoseconds in 64 bits: about 1677-09-21 to
  // 2262-04-11. A year outside that (any of 0000-9999 reads) would overflow
  // the conversion below and wrap to some other time; refuse it instead.
  constexpr std::int64_t kMaxSeconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max())
          .count() -
      1;
  if (secs > kMaxSeconds || secs < -kMaxSeconds) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(secs) + std::chrono::nanoseconds(nanos)));
}

Result<std::chrono::milliseconds> ParseDurationOrError(std::string_view text) {
  if (text.empty()) return InvalidArgumentError("empty duration");
  const std::string quoted = "'" + std::string(text) + "'";
  const auto too_long = [&quoted] {
    return InvalidArgumentError(quoted + " is longer than the maximum, 3650d (10 years)");
  };
  std::int64_t total_ms = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::int64_t value = 0;
    std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      value = value * 10 + (text[pos] - '0');
      // 10^12 of any unit is past the maximum already; stops before overflow.
      if (value > 1'000'000'000'000) return too_long();
      ++pos;
    }
    if (pos == start) {
      return InvalidArgumentError(quoted + ": expected a number at '" +
                                  std::string(text.substr(pos)) + "'");
    }
    std::int64_t unit_ms;
    if (text.substr(pos, 2) == "ms") {
      unit_ms = 1;
      pos += 2;
    } else if (pos < text.size()) {
      switch (text[pos]) {
        case 's':
          unit_ms = 1000;
          break;
        case 'm':
          unit_ms = 60'000;
          break;
        case 'h':
          unit_ms = 3'600'000;
          break;
        case 'd':
          unit_ms = 86'400'000;
          break;
        default:
          return InvalidArgumentError(quoted + ": unknown unit '" + std::string(1, text[pos]) +
                                      "' (use ms, s, m, h, d)");
      }
      ++pos;
    } else {
      return InvalidArgumentError(quoted + ": a number needs a unit (ms, s, m, h, d), e.g. 90s");
    }
    // value <= 10^12 and unit <= 8.64e7: the product and the running total
    // (kept <= kMaxDuration) stay far from INT64_MAX.
    total_ms += value * unit_ms;
    if (total_ms > kMaxDuration.count()) return too_long();
  }
  return std::chrono::milliseconds(total_ms);
}

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  Result<std::chrono::milliseconds> d = ParseDurationOrError(text);
  if (!d.ok()) return std::nullopt;
  return *d;
}

char* WriteDuration(char* p, std::chrono::milliseconds d) {
  std::int64_t ms = d.count();
  if (ms == 0) {
    *p++ = '0';
    *p++ = 's';
    return p;
  }
  const struct {
    std::int64_t size;
    std::string_view unit;
  } units[] = {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "m"}, {1000, "s"}, {1, "ms"}};
  // At most 19 digits of days and 11 more bytes per unit after: within
  // kDurationBound.
  for (const auto& u : units) {
    if (ms >= u.size) {
      p = std::to_chars(p, p + 20, ms / u.size).ptr;
      std::memcpy(p, u.unit.data(), u.unit.size());
      p += u.unit.size();
      ms %= u.size;
    }
  }
  return p;
}

void AppendDuration(std::string& out, std::chrono::milliseconds d) {
  char buf[kDurationBound];
  out.append(buf, WriteDuration(buf, d));
}

std::string FormatDuration(std::chrono::milliseconds d) {
  std::string out;
  AppendDuration(out, d);
  return out;
}

}  // namespace faultline
