// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/fault_event.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/correlation/correlation_metrics.h"
#include "tainter/correlation/correlator.h"

namespace RdKafka {
class KafkaConsumer;
}

namespace faultline {

// What the `correlation:` section of the tainter config says.
struct CorrelationSettings {
  bool enabled = true;
  std::string identity_topic = "faultline.identity";
  // How far back every partition is re-read at start: the longest of the
  // attribution window and the incidents' window + lookback is enough.
  std::chrono::seconds rebuild_span{std::chrono::minutes(30)};
  Correlator::Options correlator;
};

// The attribution stage's reader: EVERY partition of the events topic and of
// the identity topic, whatever the consumer group assigned this replica
// (tainter/README.md, "Fleet correlation"). It does not join a group and
// commits nothing: it is assigned all partitions by hand and, at start,
// re-reads `rebuild_span` of history (by timestamp; where the broker cannot
// map a time to an offset, `rebuild_max_messages` per partition) and the
// whole compacted identity topic, so a restart or a rebalance rebuilds the
// same accusations and incidents. Every replica computes the same state;
// only the owner of the accused node's partition acts on it.
//
// Thread-safety: one thread calls everything.
class CorrelationConsumer {
 public:
  struct Options {
    std::string brokers;
    std::string events_topic = "faultline.events";
    std::string identity_topic = "faultline.identity";
    std::string group = "faultline-tainter";  // group.id (required by librdkafka; never joined)
    std::map<std::string, std::string> properties;
    std::chrono::seconds rebuild_span{std::chrono::minutes(30)};
    std::int64_t rebuild_max_messages = 10'000;
    std::chrono::milliseconds timeout{std::chrono::seconds(10)};
  };

  static Result<std::unique_ptr<CorrelationConsumer>> Create(Options options,
                                                             Correlator& correlator,
                                                             MetricsRegistry& metrics,
                                                             const Clock& clock);
  ~CorrelationConsumer();

  // Assigns every partition of both topics. kUnavailable: the events topic's
  // metadata could not be read (call again later).
  Status Start();
  bool started() const { return started_; }
  // Hands what has been fetched (at most `max_messages`) to the Correlator.
  int Poll(std::chrono::milliseconds timeout, int max_messages = 1000);
  // Every partition has been read up to where it ended at Start(): the
  // history is rebuilt, incidents may be closed.
  bool caught_up() const;
  std::chrono::system_clock::time_point started_at() const { return started_at_; }
  void Close();

 private:
  CorrelationConsumer(Options options, Correlator& correlator, MetricsRegistry& metrics,
                      const Clock& clock);

  Options options_;
  Correlator& correlator_;
  CorrelationMetrics metrics_;
  const Clock& clock_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  bool started_ = false;
  std::chrono::system_clock::time_point started_at_{};
  // (topic, partition) -> the offset it must reach to be caught up.
  std::map<std::pair<std::string, int32_t>, std::int64_t> catch_up_;
  // Events partitions (partition, start offset) waiting for the identities.
  std::vector<std::pair<int32_t, std::int64_t>> pending_events_;
  bool identity_pending_ = false;
  std::chrono::steady_clock::time_point identity_deadline_{};
  FaultEvent event_;  // the message Poll() reads, parsed into the last one's buffers
  void AddEventsPartitions();
};

}  // namespace faultline
