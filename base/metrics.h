// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace faultline {

// Label name -> value for one time series: {{"source","kmsg"}}.
using MetricLabels = std::map<std::string, std::string>;

// A monotonically increasing count. Lock-free; safe from any thread.
class Counter {
 public:
  void Inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A value that goes up and down. Lock-free; safe from any thread.
class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double d);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A Prometheus histogram with fixed upper bounds (seconds, bytes, ...).
// Safe from any thread.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return bounds_; }
  // Cumulative count per bound, then +Inf; and the sum.
  std::vector<std::uint64_t> cumulative_counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // one per bound, plus +Inf
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

// The metrics of one process, rendered in the Prometheus text format
// (version 0.0.4) for /metrics.
//
// Get*() returns the series for (name, labels), creating it on first use; the
// reference stays valid for the registry's lifetime, so hot paths look a
// series up once and keep the reference. Names carry the `faultline_` prefix
// and, for counters, the `_total` suffix. Thread-safe.
class MetricsRegistry {
 public:
  Counter& GetCounter(const std::string& name, const std::string& help,
                      const MetricLabels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help,
                  const MetricLabels& labels = {});
  Histogram& GetHistogram(const std::string& name, const std::string& help,
                          const std::vector<double>& upper_bounds, const MetricLabels& labels = {});
  // A gauge read when rendered (queue depth, consumer lag). `read` runs on
  // the thread that renders and must be safe there.
  void SetGaugeCallback(const std::string& name, const std::string& help,
                        const MetricLabels& labels, std::function<double()> read);

  // The value of a counter, or 0 if it does not exist: for tests and logs.
  std::uint64_t CounterValue(const std::string& name, const MetricLabels& labels = {}) const;
  double GaugeValue(const std::string& name, const MetricLabels& labels = {}) const;

  std::string RenderPrometheus() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> callback;
  };
  struct Family {
    Type type;
    std::string help;
    std::map<MetricLabels, Series> series;
  };
  Family& FamilyFor(const std::string& name, const std::string& help, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// Escapes a label value for the text format: backslash, quote, newline.
std::string EscapeLabelValue(const std::string& value);

}  // namespace faultline
