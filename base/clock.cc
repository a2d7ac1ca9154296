// SPDX-License-Identifier: Apache-2.0
#include "base/clock.h"

namespace faultline {
namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
  std::chrono::steady_clock::time_point MonotonicNow() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace faultline
