// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/metrics.h"

namespace faultline {

// The remediator's metric families (cordons, drains, evictions), named once
// so that remediation.cc holds references instead of looking names up by
// string. Every name is documented in tainter/README.md ("Metrics, health").
// Series labelled by an error code or eviction outcome are created on first
// use. Thread-safe (the series are atomics).
class RemediationMetrics {
 public:
  explicit RemediationMetrics(MetricsRegistry& registry);

  Counter& Errors(const std::string& code);        // calls that failed and will be retried
  Counter& Evictions(const std::string& outcome);  // evicted | gone | blocked_by_budget | error

  Counter& cordoned;        // faultline_tainter_cordons_total{op="cordon"}
  Counter& found_cordoned;  // {op="found_cordoned"}: someone else's cordon, left alone
  Counter& uncordoned;      // {op="uncordon"}
  Counter& drains_started;
  Counter& drains_completed;
  Counter& drains_timed_out;  // {state="timed_out"}: past drain_deadline, left to a person
  Counter& drains_waiting;    // ticks a drain waited for a slot
  Gauge& drains_running;      // nodes of the cluster draining, last read
  Gauge& drains_active;       // drains this replica is running

 private:
  MetricsRegistry& registry_;
};

}  // namespace faultline
