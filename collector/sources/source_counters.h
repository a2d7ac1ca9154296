// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>

#include "collector/sources/source.h"

namespace faultline {

// The SourceStats counters as atomics: the source's thread adds, any thread
// (the metrics endpoint) takes a snapshot with Snapshot(). Relaxed ordering:
// each counter is a statistic on its own, not a synchronisation point.
struct SourceCounters {
  std::atomic<std::uint64_t> records{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> parse_errors{0};
  std::atomic<std::uint64_t> lost{0};

  static void Add(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }

  SourceStats Snapshot() const {
    SourceStats s;
    s.records = records.load(std::memory_order_relaxed);
    s.bytes = bytes.load(std::memory_order_relaxed);
    s.parse_errors = parse_errors.load(std::memory_order_relaxed);
    s.lost = lost.load(std::memory_order_relaxed);
    return s;
  }
};

}  // namespace faultline
