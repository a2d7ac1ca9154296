// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>

#include "base/log_testing.h"
#include "base/time_format.h"

namespace faultline {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

std::mutex& SinkMutex() {
  static std::mutex mu;
  return mu;
}

std::function<void(std::string_view)>& Sink() {
  static std::function<void(std::string_view)> sink;
  return sink;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

bool ParseLogLevel(std::string_view name, LogLevel* level) {
  if (name == "debug") {
    *level = LogLevel::kDebug;
  } else if (name == "info") {
    *level = LogLevel::kInfo;
  } else if (name == "warn" || name == "warning") {
    *level = LogLevel::kWarning;
  } else if (name == "error") {
    *level = LogLevel::kError;
  } else {
    return false;
  }
  return true;
}

void Log(LogLevel level, std::string_view component, std::string_view message,
         const nlohmann::json& fields) {
  if (!LogEnabled(level)) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = FormatRfc3339(std::chrono::system_clock::now());
  line["level"] = LevelName(level);
  line["component"] = component;
  line["msg"] = message;
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) line[key] = value;
  }
  // Invalid UTF-8 in a field (a log line from a device) must not throw here.
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::lock_guard<std::mutex> lock(SinkMutex());
  if (Sink()) {
    Sink()(std::string_view(text).substr(0, text.size() - 1));
    return;
  }
  // One write(2) per line, so lines from threads never interleave.
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
}

void SetLogSinkForTest(std::function<void(std::string_view line)> sink) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  Sink() = std::move(sink);
}

}  // namespace faultline
