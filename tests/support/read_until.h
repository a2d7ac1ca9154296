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

// Requests stop on its token once `timeout` has passed, from a watchdog
// thread, so that a Read() blocked in a test gives up promptly.
class StopAfter {
 public:
  explicit StopAfter(std::chrono::milliseconds timeout)
      : watchdog_([this, timeout](std::stop_token done) {
          std::mutex m;
          std::condition_variable_any cv;
          std::unique_lock lock(m);
          cv.wait_for(lock, done, timeout, [] { return false; });
          stop_.request_stop();
        }) {}
  StopAfter(const StopAfter&) = delete;
  StopAfter& operator=(const StopAfter&) = delete;

  std::stop_token token() const { return stop_.get_token(); }
  bool expired() const { return stop_.stop_requested(); }

 private:
  std::stop_source stop_;
  std::jthread watchdog_;  // last: it uses stop_, and joins before stop_ goes
};

// Calls Read() until `want` records have arrived or `timeout` has passed, or
// a Read() fails. Returns what arrived, in order.
inline std::vector<LogRecord> ReadUntil(Source& source, std::size_t want,
                                        std::chrono::milliseconds timeout, std::size_t batch = 64) {
  std::vector<LogRecord> got;
  StopAfter deadline(timeout);
  while (got.size() < want && !deadline.expired()) {
    const std::size_t room = want - got.size();
    if (!source.Read(got, room < batch ? room : batch, deadline.token()).ok()) break;
  }
  return got;
}

// What a Read() with nothing to read did when stop was requested `after` into
// it: its status, what it returned, and how long it took to return after the
// request (a source must honour stop promptly so the agent stops in time).
struct StoppedRead {
  Status status;
  std::vector<LogRecord> records;
  std::chrono::steady_clock::duration return_delay{};
};
inline StoppedRead ReadThenStop(Source& source,
                                std::chrono::milliseconds after = std::chrono::milliseconds(300)) {
  StoppedRead read;
  std::stop_source stop;
  std::chrono::steady_clock::time_point stopped_at;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(after);
    stopped_at = std::chrono::steady_clock::now();
    stop.request_stop();
  });
  read.status = source.Read(read.records, 10, stop.get_token());
  const auto returned_at = std::chrono::steady_clock::now();
  stopper.join();
  read.return_delay = returned_at - stopped_at;
  return read;
}

// Commits every record's cursor, in order, as the pipeline does once their
// events are delivered.
inline void CommitAll(Source& source, const std::vector<LogRecord>& records) {
  for (const LogRecord& r : records) source.Commit(r.cursor);
}

}  // namespace faultline
