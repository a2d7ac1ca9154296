// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/tainter_metrics.h"

#include <vector>

#include "tainter/core/policy.h"

namespace faultline {
namespace {

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                            0.5,   1,    2.5,   5,    10};

}  // namespace

TainterMetrics::TainterMetrics(MetricsRegistry& r)
    : events(r.GetCounter("faultline_tainter_events_total", "events handed to the policy")),
      replayed(r.GetCounter("faultline_tainter_replayed_events_total",
                            "events re-read to rebuild windows (not decided again)")),
      taints_added(r.GetCounter("faultline_tainter_taints_added_total", "taints faultline added")),
      dropped_work(r.GetCounter("faultline_tainter_dropped_work_total",
                                "decisions dropped because the retry queue was full")),
      refusal_events_suppressed(r.GetCounter(
          "faultline_tainter_refusal_events_suppressed_total",
          "FaultlineValveShut Events not recorded: over valve.refusal_events_per_minute (the "
          "refusals themselves are in faultline_tainter_taints_refused_total)")),
      bad_annotations(
          r.GetCounter("faultline_tainter_bad_annotations_total",
                       "reasons annotations that could not be read (the taint is adopted as is)")),
      events_consumed(
          r.GetCounter("faultline_tainter_events_consumed_total", "Kafka messages consumed")),
      dead_lettered(r.GetCounter("faultline_tainter_dead_lettered_total",
                                 "undecodable or wrong-schema messages sent to the dead-letter "
                                 "topic")),
      dead_letter_fails(r.GetCounter("faultline_tainter_dead_letter_failures_total",
                                     "dead-letter writes that failed (the message is dropped)")),
      partition_mismatches(r.GetCounter(
          "faultline_tainter_partition_mismatches_total",
          "events that arrived on another partition than librdkafka's default partitioner "
          "gives their key (the producer partitions differently)")),
      rule_mismatches(r.GetCounter(
          "faultline_tainter_rule_mismatches_total",
          "events whose action, severity, expire, threshold or category differ from what their "
          "rule says (set aside, or decided by the rule with rules.on_mismatch: decide_by_rule)")),
      pending_work(r.GetGauge("faultline_tainter_pending_work", "decisions waiting to be applied")),
      tainted_nodes(r.GetGauge("faultline_tainter_tainted_nodes",
                               "managed nodes carrying faultline's taint")),
      managed_nodes(
          r.GetGauge("faultline_tainter_managed_nodes", "nodes matching the node selector")),
      consumer_lag(r.GetGauge(
          "faultline_tainter_consumer_lag",
          "messages not yet decided on the assigned partitions (high watermark - position)")),
      registry_(r) {
  // Every labelled series a dashboard or an alert reads exists from the
  // start at 0 (Prometheus convention: rate() and absent() need a first
  // sample, and a forgery's first set-aside event must show as an increase).
  for (std::size_t o = 0; o < decisions_.size(); ++o) {
    decisions_[o] = &Decisions(std::string(DecisionOutcomeName(static_cast<DecisionOutcome>(o))));
  }
  Decisions("unknown_node");
  for (const char* why : {"key_mismatch", "unknown_rule", "rule_mismatch"}) SetAside(why);
  for (const char* why : {"expired", "by_hand", "reboot", "clear"}) TaintsLifted(why);
}

Counter& TainterMetrics::Decisions(const std::string& outcome) {
  return registry_.GetCounter("faultline_tainter_decisions_total", "decisions by outcome",
                              {{"outcome", outcome}});
}

Counter& TainterMetrics::TaintsRefused(const std::string& rule) {
  return registry_.GetCounter("faultline_tainter_taints_refused_total",
                              "would-be taints refused by the safety valve", {{"rule", rule}});
}

Counter& TainterMetrics::TaintsLifted(const std::string& why) {
  return registry_.GetCounter("faultline_tainter_taints_lifted_total", "taints faultline lifted",
                              {{"why", why}});
}

Counter& TainterMetrics::DryRunWrites(const std::string& op) {
  return registry_.GetCounter("faultline_tainter_dry_run_writes_total",
                              "writes a dry run did not send", {{"op", op}});
}

Counter& TainterMetrics::PodEvents(const std::string& outcome) {
  return registry_.GetCounter("faultline_tainter_pod_events_total",
                              "Events about the pods of a node faultline took out, by outcome",
                              {{"outcome", outcome}});
}

Counter& TainterMetrics::ConditionWrites(const std::string& type, const std::string& status) {
  return registry_.GetCounter("faultline_tainter_condition_writes_total",
                              "NodeCondition changes written to nodes/status, by type and status",
                              {{"type", type}, {"status", status}});
}

Counter& TainterMetrics::ApiErrors(const std::string& op, const std::string& code) {
  return registry_.GetCounter("faultline_tainter_api_errors_total",
                              "Kubernetes API errors by operation and code",
                              {{"op", op}, {"code", code}});
}

Histogram& TainterMetrics::ApiLatency(const std::string& op) {
  return registry_.GetHistogram("faultline_tainter_api_request_seconds",
                                "Kubernetes API calls by operation", kLatencyBounds, {{"op", op}});
}

Counter& TainterMetrics::KafkaErrors(const std::string& code) {
  return registry_.GetCounter("faultline_tainter_kafka_errors_total", "librdkafka errors by code",
                              {{"code", code}});
}

Counter& TainterMetrics::SetAside(const std::string& why) {
  return registry_.GetCounter("faultline_tainter_events_set_aside_total",
                              "events the tainter did not take as written, by why", {{"why", why}});
}

}  // namespace faultline
