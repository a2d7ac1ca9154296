// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>

namespace faultline {

// The time, injectable. Code that reads the time takes a Clock&, so tests
// pass a FakeClock (tests/fakes/fake_clock.h) and advance it by hand.
//
// Thread-safety: implementations are safe to call from any thread.
class Clock {
 public:
  virtual ~Clock() = default;
  // Wall time: for timestamps that people and other machines read.
  virtual std::chrono::system_clock::time_point Now() const = 0;
  // Monotonic time: for intervals, timeouts and rate limits.
  virtual std::chrono::steady_clock::time_point MonotonicNow() const = 0;
};

// The process's real clock; lives for the whole program.
Clock& RealClock();

}  // namespace faultline
