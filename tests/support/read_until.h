// SPDX-License-Identifier: Apache-2.0
#pragma once

// Drives a Source the way the pipeline does, with a bounded wait.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "collector/sources/source.h"

namespace faultline {

// Calls Read() until `want` records have arrived or `timeout` has passed
// (then a watchdog requests stop, which Read() must honour promptly), or a
// Read() fails. Returns what arrived, in order.
inline std::vector<LogRecord> ReadUntil(Source& source, std::size_t want,
                                        std::chrono::milliseconds timeout, std::size_t batch = 64) {
  std::vector<LogRecord> got;
  std::stop_source stop;
  std::jthread watchdog([&stop, timeout](std::stop_token done) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, done, timeout, [] { return false; });
    stop.request_stop();
  });
  while (got.size() < want && !stop.stop_requested()) {
    const std::size_t room = want - got.size();
    if (!source.Read(got, room < batch ? room : batch, stop.get_token()).ok()) break;
  }
  return got;
}

// Commits every record's cursor, in order, as the pipeline does once their
// events are delivered.
inline void CommitAll(Source& source, const std::vector<LogRecord>& records) {
  for (const LogRecord& r : records) source.Commit(r.cursor);
}

}  // namespace faultline
