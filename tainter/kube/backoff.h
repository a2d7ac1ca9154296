// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace faultline {

// Exponential backoff with full jitter (AWS architecture blog, "Exponential
// Backoff And Jitter"): attempt n waits a uniform random time in
// [0, min(cap, base * 2^n)], so many clients retrying after the same outage
// spread out instead of arriving together.
//
// Thread-safety: one thread at a time.
class Backoff {
 public:
  // seed 0 picks a random seed; tests pass a fixed one.
  Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap, std::uint64_t seed = 0)
      : base_(base), cap_(cap), rng_(seed != 0 ? seed : std::random_device{}()) {}

  // The ceiling for attempt `n` (0-based): min(cap, base * 2^n).
  std::chrono::milliseconds Ceiling(int n) const {
    const int shift = std::clamp(n, 0, 30);
    const std::int64_t ceiling = base_.count() << shift;
    return std::min(cap_, std::chrono::milliseconds(ceiling));
  }

  // A random delay in [0, Ceiling(n)].
  std::chrono::milliseconds Delay(int n) {
    std::uniform_int_distribution<std::int64_t> dist(0, Ceiling(n).count());
    return std::chrono::milliseconds(dist(rng_));
  }

 private:
  std::chrono::milliseconds base_;
  std::chrono::milliseconds cap_;
  std::mt19937_64 rng_;
};

}  // namespace faultline
