// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

#include "base/clock.h"

namespace faultline {

// A token bucket (client-go's QPS and burst): `burst` requests may go at
// once, then `qps` per second on average. The Kubernetes client's rate
// limit (tainter/kube/kube_http.h) and the valve's budget of refusal Events
// (tainter/core/policy.h). Time comes from the injected
// Clock, so tests drive it with a FakeClock.
//
// Reserve() never sleeps: it takes a token and tells the caller how long to
// wait before using it, or refuses when that wait would exceed `max_wait`
// (nothing is taken then), so every wait is bounded by the caller.
//
// Thread-safety: one thread at a time (the NodeApi contract).
class TokenBucket {
 public:
  // qps <= 0 disables limiting.
  TokenBucket(double qps, int burst, const Clock& clock)
      : qps_(qps),
        burst_(std::max(1, burst)),
        clock_(clock),
        tokens_(burst_),
        last_(clock.MonotonicNow()) {}

  // The wait before the reserved request may be sent (zero when a token is
  // there now); nullopt if that wait would be longer than `max_wait`.
  std::optional<std::chrono::nanoseconds> Reserve(std::chrono::nanoseconds max_wait) {
    if (qps_ <= 0) return std::chrono::nanoseconds(0);
    const auto now = clock_.MonotonicNow();
    if (now > last_) {
      const double elapsed = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
      last_ = now;
    }
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return std::chrono::nanoseconds(0);
    }
    // Tokens may go negative: each reservation queues behind the previous one.
    const auto wait =
        std::chrono::nanoseconds(static_cast<std::int64_t>((1 - tokens_) / qps_ * 1e9));
    if (wait > max_wait) return std::nullopt;
    tokens_ -= 1;
    return wait;
  }

 private:
  const double qps_;
  const int burst_;
  const Clock& clock_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace faultline
