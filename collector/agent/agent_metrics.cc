// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_metrics.h"

namespace faultline {
namespace {

Counter& Events(MetricsRegistry& r, const char* outcome) {
  return r.GetCounter("faultline_agent_events_total",
                      "Fault events by outcome: produced, delivered, rejected (for good), "
                      "undelivered (retriable failure), suppressed (folded repeats), ignored",
                      {{"outcome", outcome}});
}

}  // namespace

AgentMetrics::AgentMetrics(MetricsRegistry& registry)
    : events_produced(Events(registry, "produced")),
      events_delivered(Events(registry, "delivered")),
      events_rejected(Events(registry, "rejected")),
      events_undelivered(Events(registry, "undelivered")),
      events_suppressed(Events(registry, "suppressed")),
      events_ignored(Events(registry, "ignored")),
      delivery_latency(registry.GetHistogram(
          "faultline_agent_delivery_latency_seconds",
          "Time from handing an event to the producer to the broker's acknowledgement",
          {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300})),
      queue_depth(registry.GetGauge("faultline_agent_queue_depth",
                                    "Batches of records waiting for the match thread")),
      uncommitted_records(registry.GetGauge(
          "faultline_agent_uncommitted_records",
          "Records read whose checkpoint waits for an event delivery, all sources")),
      rules_loaded(registry.GetGauge("faultline_agent_rules_loaded", "Enabled rules in force")),
      reloads_ok(registry.GetCounter("faultline_agent_rule_reloads_total", "Rule reloads by result",
                                     {{"result", "success"}})),
      reloads_failed(registry.GetCounter("faultline_agent_rule_reloads_total",
                                         "Rule reloads by result", {{"result", "failure"}})),
      kafka_up(registry.GetGauge("faultline_agent_kafka_up",
                                 "1 when at least one Kafka broker is reachable")),
      kafka_errors(registry.GetCounter("faultline_agent_kafka_errors_total",
                                       "Producer errors reported by librdkafka's error callback")),
      registry_(registry) {}

Counter& AgentMetrics::SourceLines(const std::string& source) {
  return registry_.GetCounter("faultline_agent_source_lines_total", "Records read per source",
                              {{"source", source}});
}
Counter& AgentMetrics::SourceBytes(const std::string& source) {
  return registry_.GetCounter("faultline_agent_source_bytes_total",
                              "Bytes of record text read per source", {{"source", source}});
}
Counter& AgentMetrics::SourceParseErrors(const std::string& source) {
  return registry_.GetCounter("faultline_agent_source_parse_errors_total",
                              "Input a source could not parse (skipped)", {{"source", source}});
}
Counter& AgentMetrics::SourceLost(const std::string& source) {
  return registry_.GetCounter("faultline_agent_source_lost_records_total",
                              "Records lost before they could be read (kmsg overruns, ...)",
                              {{"source", source}});
}
Counter& AgentMetrics::SourceReadErrors(const std::string& source) {
  return registry_.GetCounter("faultline_agent_source_read_errors_total",
                              "Failed Read() calls per source", {{"source", source}});
}
Counter& AgentMetrics::CheckpointSaveFailures(const std::string& source) {
  return registry_.GetCounter("faultline_agent_checkpoint_save_failures_total",
                              "Checkpoints that could not be written", {{"source", source}});
}
Counter& AgentMetrics::Matches(const std::string& rule) {
  return registry_.GetCounter("faultline_agent_matches_total", "Rule matches per rule",
                              {{"rule", rule}});
}

nlohmann::json AgentMetrics::Summary() const {
  return {
      {"events_produced", events_produced.value()},
      {"events_delivered", events_delivered.value()},
      {"events_rejected", events_rejected.value()},
      {"events_undelivered", events_undelivered.value()},
      {"events_suppressed", events_suppressed.value()},
      {"queue_depth", queue_depth.value()},
      {"uncommitted_records", uncommitted_records.value()},
      {"rules_loaded", rules_loaded.value()},
      {"reloads_ok", reloads_ok.value()},
      {"reloads_failed", reloads_failed.value()},
      {"kafka_up", kafka_up.value()},
  };
}

}  // namespace faultline
