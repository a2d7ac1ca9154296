// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>

#include "base/clock.h"

namespace faultline {

// A clock that holds still until the test calls Advance(). Both the wall and
// the monotonic time move together. Safe to read from any thread.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::chrono::system_clock::time_point start =
                         std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000)))
      : wall_(start.time_since_epoch().count()) {}

  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(std::chrono::system_clock::duration(wall_.load()));
  }
  std::chrono::steady_clock::time_point MonotonicNow() const override {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(mono_.load()));
  }

  // The wall clock alone jumps (NTP step, an operator's `date -s`); the
  // monotonic clock does not move. Negative: backwards.
  void JumpWall(std::chrono::nanoseconds by) {
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(by).count();
  }

  void Advance(std::chrono::nanoseconds by) {
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(by).count();
    mono_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(by).count();
  }

 private:
  std::atomic<std::chrono::system_clock::rep> wall_;
  std::atomic<std::chrono::steady_clock::rep> mono_{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::hours(1))
          .count()};
};

}  // namespace faultline
