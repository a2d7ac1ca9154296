// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "base/metrics.h"
#include "tainter/core/policy.h"

namespace faultline {

// faultline-tainter's metric families, looked up once so that the applier
// and the consumer hold plain references instead of looking names up by
// string. Every name is documented in tainter/README.md ("Metrics, health").
// Labelled series are created on first use through the registry.
// Thread-safe (the series are atomics).
class TainterMetrics {
 public:
  explicit TainterMetrics(MetricsRegistry& registry);

  MetricsRegistry& registry() { return registry_; }

  // decisions_total{outcome} of a policy outcome: looked up once, since it
  // is counted for every event.
  Counter& Decisions(DecisionOutcome outcome) {
    return *decisions_[static_cast<std::size_t>(outcome)];
  }
  // Per label value.
  Counter& Decisions(const std::string& outcome);  // also unknown_node, attributed_to_peer
  Counter& TaintsRefused(const std::string& rule);
  Counter& TaintsLifted(const std::string& why);   // expired | by_hand | reboot | clear
  Counter& DryRunWrites(const std::string& op);    // update | event
  Counter& PodEvents(const std::string& outcome);  // recorded | failed | over_bound | ...
  Counter& ConditionWrites(const std::string& type, const std::string& status);
  Counter& ApiErrors(const std::string& op, const std::string& code);
  Histogram& ApiLatency(const std::string& op);
  Counter& KafkaErrors(const std::string& code);
  Counter& SetAside(const std::string& why);  // events the tainter does not trust as written

  Counter& events;                     // handed to the policy
  Counter& replayed;                   // re-read to rebuild windows, not decided again
  Counter& taints_added;               // taints faultline added
  Counter& dropped_work;               // decisions dropped because the retry queue was full
  Counter& refusal_events_suppressed;  // refusal Events over valve.refusal_events_per_minute
  Counter& bad_annotations;            // reasons annotations that could not be read
  Counter& events_consumed;            // Kafka messages consumed
  Counter& dead_lettered;              // sent to the dead-letter topic
  Counter& dead_letter_fails;          // dead-letter writes that failed
  Counter& partition_mismatches;       // events on another partition than their key's
  Counter& rule_mismatches;            // events whose claims differ from their rule's outcome
  Gauge& pending_work;
  Gauge& tainted_nodes;
  Gauge& managed_nodes;
  Gauge& consumer_lag;

 private:
  MetricsRegistry& registry_;
  std::array<Counter*, static_cast<std::size_t>(DecisionOutcome::kLift) + 1> decisions_{};
};

}  // namespace faultline
