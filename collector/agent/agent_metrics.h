// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/metrics.h"

namespace faultline {

// The agent's metric families, looked up once so that hot paths hold plain
// references. Every name is documented in collector/README.md ("Agent").
// Per-source and per-rule series are created on first use through the
// registry. Thread-safe (the series are atomics).
class AgentMetrics {
 public:
  explicit AgentMetrics(MetricsRegistry& registry);

  MetricsRegistry& registry() { return registry_; }

  // Per source (label `source`).
  Counter& SourceLines(const std::string& source);
  Counter& SourceBytes(const std::string& source);
  Counter& SourceParseErrors(const std::string& source);
  Counter& SourceLost(const std::string& source);
  Counter& SourceReadErrors(const std::string& source);
  Counter& CheckpointSaveFailures(const std::string& source);

  // Per rule (label `rule`).
  Counter& Matches(const std::string& rule);

  Counter& events_produced;     // handed to the sink (first occurrences and follow-ups)
  Counter& events_delivered;    // acknowledged by Kafka
  Counter& events_rejected;     // refused for good (too large, ...): counted, committed
  Counter& events_undelivered;  // failed retriably (timeout, purge): checkpoint held
  Counter& events_suppressed;   // repeats folded into follow-ups
  Counter& events_ignored;      // matches of `action: ignore` rules
  Histogram& delivery_latency;  // seconds from Publish to acknowledgement
  Gauge& queue_depth;           // batches waiting for the match thread
  Gauge& uncommitted_records;   // records read but not yet committable, all sources
  Gauge& rules_loaded;          // enabled rules in force
  Counter& reloads_ok;
  Counter& reloads_failed;
  Gauge& kafka_up;        // 1 when a broker is reachable
  Counter& kafka_errors;  // error_cb calls (transport, all brokers down, ...)

  // The counters, for the once-a-minute and shutdown log lines.
  nlohmann::json Summary() const;

 private:
  MetricsRegistry& registry_;
};

}  // namespace faultline
