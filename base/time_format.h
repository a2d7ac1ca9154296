// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

// "2026-11-22T07:02:53.179123Z": UTC, microseconds, always 6 digits.
std::string FormatRfc3339(std::chrono::system_clock::time_point t);
// The same text appended to `out`, without a std::string of its own: the
// event writer formats two times per event.
void AppendRfc3339(std::string& out, std::chrono::system_clock::time_point t);
// The most bytes of that text (any time_point), and the text written at `p`
// (with room for them); returns its end.
inline constexpr std::size_t kRfc3339Bound = 64;
char* WriteRfc3339(char* p, std::chrono::system_clock::time_point t);

// Parses RFC 3339 as Go's time.RFC3339Nano writes it and kubelet reads it:
// "2026-11-22T07:02:53Z", "2026-11-22T07:02:53.17905Z" (trailing zeros
// trimmed, as containerd writes) and "2026-11-22T07:02:53.178710000+02:00"
// (CRI-O). Fractions beyond nanoseconds are cut. nullopt if malformed, or
// outside what system_clock holds (about 1677-09-21 to 2262-04-11).
std::optional<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);

// The longest duration ParseDuration accepts: 3650d (10 years). Durations
// are added to nanosecond clocks (system_clock, steady_clock), which
// overflow about 292 years after 1970; nothing faultline waits for is
// longer than a few years.
inline constexpr std::chrono::milliseconds kMaxDuration{3650LL * 86'400'000LL};

// Durations as written in rule packs and configs: a sequence of
// <integer><unit> with units ms, s, m, h, d: "90s", "10m", "24h", "1h30m",
// "7d". nullopt if malformed, empty, a unit is missing, or the total is
// beyond kMaxDuration (the sum never overflows).
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);
// The same, with the reason as a kInvalidArgument error, e.g.
// "'106752d' is longer than the maximum, 3650d (10 years)".
Result<std::chrono::milliseconds> ParseDurationOrError(std::string_view text);

// The shortest form ParseDuration reads back: "1h30m", "250ms", "0s".
std::string FormatDuration(std::chrono::milliseconds d);
// The same text appended to `out`.
void AppendDuration(std::string& out, std::chrono::milliseconds d);
// The most bytes of that text (any duration), and the text written at `p`
// (with room for them); returns its end.
inline constexpr std::size_t kDurationBound = 64;
char* WriteDuration(char* p, std::chrono::milliseconds d);

}  // namespace faultline
