// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/apply/node_applier.h"
#include "tainter/apply/tainter_metrics.h"
#include "tainter/intake/rule_check.h"

namespace RdKafka {
class KafkaConsumer;
class Producer;
class Message;
class TopicPartition;
}  // namespace RdKafka

namespace faultline {

// librdkafka's max.poll.interval.ms from the passthrough properties (its
// default, 300 s, when unset or unreadable): the longest the daemon's one
// thread may stay away from Poll() before the group drops this member.
std::chrono::milliseconds MaxPollInterval(const std::map<std::string, std::string>& properties);

// The Kafka half of faultline-tainter: a consumer-group member that reads
// FaultEvents (key = node) and hands them to a Tainter, with manual commits.
//
// Delivery:
//  - enable.auto.commit=false and enable.auto.offset.store=false, always
//    (a passthrough property cannot turn them on). An offset is committed
//    only once the Tainter says the message's decision is applied or
//    deliberately dropped; per partition, the commit is the lowest offset
//    still in flight, so nothing undecided is ever skipped.
//  - A message ParseFaultEvent rejects goes to `dead_letter_topic` (value =
//    the original payload, key = the original key, headers
//    faultline.dlq.reason / .topic / .partition / .offset), is counted, and
//    its offset is done once the dead-letter write is acknowledged (or has
//    failed for good: counted, never a stuck partition).
//  - On assignment, each partition starts at min(committed offset, the
//    offset for now - rebuild_span): messages before the committed offset
//    were decided before and are only Replay()ed into the threshold windows
//    and the dedupe set; the rest are live. A partition without a committed
//    offset (a new group) starts at now - rebuild_span too; there, messages
//    older than the span (by Kafka timestamp) are replayed, never decided.
//  - On revocation: commit what is done, drop the Tainter's queued work for
//    nodes seen on those partitions (their new owner re-reads them).
//
// `properties` pass through to both the consumer and the dead-letter
// producer (SASL, TLS, timeouts, ...).
//
// Thread-safety: one thread calls Poll/Tick/Close (the rebalance callback
// runs inside Poll). Readiness accessors may be read from any thread.
class KafkaEventConsumer {
 public:
  struct Options {
    std::string brokers;
    std::string topic = "faultline.events";
    std::string group = "faultline-tainter";
    std::string dead_letter_topic = "faultline.events.dead-letter";
    std::map<std::string, std::string> properties;
    std::chrono::seconds rebuild_span{std::chrono::hours(24)};
    // When the broker cannot say which offset `now - rebuild_span` is
    // (librdkafka's mock cluster answers -1), re-read at most this many
    // messages before the start offset instead; their timestamps still
    // decide what counts.
    std::int64_t rebuild_max_messages = 10'000;
    // Timeout of the broker requests made while assigning partitions.
    std::chrono::milliseconds assign_timeout{std::chrono::seconds(10)};
    // Each event, live or replayed, is checked against its rule and carries
    // the rule's outcome from then on (tainter/intake/rule_check.h); one that fails
    // is set aside like a key mismatch. faultline-tainter always sets it;
    // null (embedding tests only) takes events as written. Not owned.
    RuleCheck* rule_check = nullptr;
    // Called in Poll() before each message is decided: the daemon applies
    // the node changes its watch received meanwhile (a taint lifted by hand
    // a moment before this event must not count against the valve). Empty:
    // nothing.
    std::function<void()> before_decide;
  };

  // Consumer properties set before `properties` (which override them), for
  // a decision within tens of milliseconds of the produce:
  //  - fetch.wait.max.ms 50 (librdkafka: 500): how long a broker may hold a
  //    fetch that found no data. A real broker answers a held fetch as soon
  //    as fetch.min.bytes (1) arrived, but librdkafka's mock cluster (the
  //    tests, bench/latency) holds it for the whole wait, so there a message
  //    waited up to 500 ms. Cost: an idle replica sends up to 20 fetches/s
  //    per broker instead of 2 (bench/README.md, "Detection latency").
  //  - fetch.error.backoff.ms 100 (librdkafka: 500): the pause after a
  //    failed fetch (a leader change, a restarted broker).
  static constexpr std::pair<const char*, const char*> kLatencyDefaults[] = {
      {"fetch.wait.max.ms", "50"},
      {"fetch.error.backoff.ms", "100"},
  };

  // The consumer's librdkafka properties in the order they are set (a later
  // one wins): faultline's fixed ones, kLatencyDefaults, `properties`, and
  // the two that keep offsets manual.
  static std::vector<std::pair<std::string, std::string>> ConsumerProperties(const Options& o);

  // kInvalidArgument: a property librdkafka rejects (the message names it).
  static Result<std::unique_ptr<KafkaEventConsumer>> Create(Options options, Tainter& tainter,
                                                            MetricsRegistry& metrics,
                                                            const Clock& clock);
  ~KafkaEventConsumer();  // Close()s with a short timeout if still open

  // Subscribes; the group join happens during the following Poll() calls.
  Status Start();
  // Waits up to `timeout` for the first message, then takes what is
  // already fetched (at most `max_messages`), handing each to the Tainter.
  // Returns how many messages it took.
  int Poll(std::chrono::milliseconds timeout, int max_messages = 500);
  // Commits the done prefix of every partition (async unless `sync`), and
  // updates the lag gauge.
  void Commit(bool sync = false);
  // Flushes the dead-letter producer within `timeout`, commits
  // synchronously and leaves the group. The Tainter's queued work is dropped
  // (it is uncommitted: whoever owns the partitions next decides it again).
  void Close(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Partitions currently assigned to this member.
  int assigned_partitions() const { return assigned_.load(); }
  // A group assignment has happened (even an empty one) and no "all brokers
  // down" error is current.
  bool ready() const { return joined_.load() && connected_.load(); }
  // This replica decides for `node`: the node's partition (key = node name,
  // librdkafka's default partitioner, consistent_random = CRC-32 of the key
  // modulo the partition count, as the agent's producer uses) is assigned
  // here, or an event of the node arrived on an assigned partition.
  bool Owns(const std::string& node) const;
  // The partition of `key` among `partitions` as the agent's producer picks it.
  static int32_t PartitionFor(const std::string& key, int32_t partitions);

 private:
  friend struct KafkaEventConsumerTesting;  // tainter/intake/event_consumer_testing.h
  struct PartitionState {
    std::int64_t replay_until = -1;       // offsets below were decided before
    std::int64_t history_before_ms = -1;  // new group: older messages are history
    std::set<std::int64_t> in_flight;
    std::int64_t next = -1;       // one past the highest offset taken
    std::int64_t committed = -1;  // what we last committed
    std::uint64_t generation = 0;
    std::set<std::string> nodes;
  };
  class Callbacks;
  friend class Callbacks;

  KafkaEventConsumer(Options options, Tainter& tainter, MetricsRegistry& metrics,
                     const Clock& clock);
  void Take(RdKafka::Message& message);
  void DeadLetter(RdKafka::Message& message, const std::string& reason, PartitionState& state);
  // false: the event was set aside (tainter/intake/rule_check.h); else it now
  // carries its rule's outcome.
  bool CheckRule(RdKafka::Message& message, FaultEvent& event, PartitionState& state);
  void Done(int32_t partition, std::uint64_t generation, std::int64_t offset);
  void OnAssign(std::vector<RdKafka::TopicPartition*>& partitions);
  void OnRevoke(std::vector<RdKafka::TopicPartition*>& partitions);
  void UpdateLag();

  Options options_;
  Tainter& tainter_;
  TainterMetrics m_;
  const Clock& clock_;
  std::unique_ptr<Callbacks> callbacks_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::map<int32_t, PartitionState> partitions_;
  std::map<int32_t, std::int64_t> committed_log_;
  std::uint64_t generation_ = 0;
  int32_t partition_count_ = 0;  // of the topic, read at assignment
  bool closed_ = false;
  std::atomic<int> assigned_{0};
  std::atomic<bool> joined_{false};
  std::atomic<bool> connected_{true};
  LogLimiter rule_log_;  // set-aside events
  // The message Take() reads, parsed into the last one's buffers
  // (ParseFaultEventInto); the Tainter copies what it keeps.
  FaultEvent event_;
};

}  // namespace faultline
