// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace faultline {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// Writes one JSON object per line to stderr:
//   {"ts":"2026-11-22T07:02:53.179Z","level":"warn","component":"kmsg","msg":"ring buffer
//   overrun","lost":12}
// Lines below the level set by SetLogLevel() are dropped. Thread-safe: one
// line is one write(2). Never log once per input line at info or above:
// count it in a metric and use a RateLimitedLog for the warning.
void Log(LogLevel level, std::string_view component, std::string_view message,
         const nlohmann::json& fields = nlohmann::json::object());

inline void LogDebug(std::string_view component, std::string_view message,
                     const nlohmann::json& fields = nlohmann::json::object()) {
  Log(LogLevel::kDebug, component, message, fields);
}
inline void LogInfo(std::string_view component, std::string_view message,
                    const nlohmann::json& fields = nlohmann::json::object()) {
  Log(LogLevel::kInfo, component, message, fields);
}
inline void LogWarning(std::string_view component, std::string_view message,
                       const nlohmann::json& fields = nlohmann::json::object()) {
  Log(LogLevel::kWarning, component, message, fields);
}
inline void LogError(std::string_view component, std::string_view message,
                     const nlohmann::json& fields = nlohmann::json::object()) {
  Log(LogLevel::kError, component, message, fields);
}

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);

// Whether the n-th occurrence (from 1) of a repeated problem is logged: the
// 1st, 10th, 100th, ..., enough to see a problem and its scale without one
// line per event.
inline bool LogThisOccurrence(std::uint64_t n) {
  while (n >= 10 && n % 10 == 0) n /= 10;
  return n == 1;
}

// "debug" | "info" | "warn" | "error" -> level; false if the name is unknown.
bool ParseLogLevel(std::string_view name, LogLevel* level);

}  // namespace faultline
