// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "collector/agent/agent_metrics.h"
#include "collector/agent/event_sink.h"

namespace RdKafka {
class Event;
class Producer;
class Topic;
}  // namespace RdKafka

namespace faultline {

// Publishes FaultEvents to one Kafka topic with librdkafka's idempotent
// producer: acks=all, key = the event's node, value = its JSON, headers
// `schema` (FaultEvent::kSchemaVersion) and `rule`.
//
// While every broker is down, librdkafka keeps the messages (up to
// `queue_max_messages`); Publish then returns kResourceExhausted and the
// pipeline holds its sources back. With the default message_timeout of 0
// (infinite) an outage only delays delivery; a finite timeout turns it into
// kDeadlineExceeded deliveries, which the pipeline never commits past.
//
// Threads: starts no thread that runs our code; delivery callbacks and
// error handling run inside Poll()/Flush() on the caller's thread
// (librdkafka's own broker threads do the I/O). Call Publish/Poll/Flush from
// one thread at a time. reachable() may be called from any thread.
class KafkaSink final : public EventSink {
 public:
  struct Options {
    std::string brokers;  // bootstrap.servers: "host:port,host:port"
    std::string topic = "faultline.events";
    // Any librdkafka property ("security.protocol", "sasl.mechanism",
    // "ssl.ca.location", ...), applied after the settings above so that it
    // can override them.
    std::map<std::string, std::string> properties;
    std::chrono::milliseconds message_timeout{0};  // 0: retry until delivered
    int queue_max_messages = 100'000;              // queue.buffering.max.messages
    // queue.buffering.max.kbytes: librdkafka's default (1 GiB) is four times
    // the agent's memory limit; events are at most a few KiB (bounded
    // message, captures and summary), so 32 MiB still buffers thousands
    // during an outage before backpressure. kafka.properties overrides it.
    int queue_max_kbytes = 32 * 1024;
    std::string compression = "lz4";  // none, gzip, snappy, lz4, zstd
    std::chrono::milliseconds linger{5};
    std::chrono::milliseconds statistics_interval{1000};  // for reachable(); 0: off
    // Runs (once, on the Poll thread) after a fatal producer error: the
    // producer will accept nothing more, and the agent should exit so that
    // it is restarted.
    std::function<void(const Status& error)> on_fatal;
  };

  // kInvalidArgument: a property librdkafka does not accept (the message
  // names it). `metrics` may be null; else it must outlive the sink.
  static Result<std::unique_ptr<KafkaSink>> Create(const Options& options, AgentMetrics* metrics);

  // Purges what is still queued without running its callbacks: callers
  // that want delivery Flush() first.
  ~KafkaSink() override;

  Status Publish(const FaultEvent& event, DeliveryCallback on_delivered) override;
  void Poll(std::chrono::milliseconds timeout) override;
  std::size_t Flush(std::chrono::milliseconds timeout) override;

  // At least one broker answers (from librdkafka's statistics and errors).
  bool reachable() const { return reachable_.load(std::memory_order_relaxed); }
  // A fatal error happened: Publish fails from now on.
  bool fatal() const { return fatal_.load(std::memory_order_relaxed); }

  struct Callbacks;  // librdkafka callback objects; defined in the .cc

 private:
  KafkaSink(const Options& options, AgentMetrics* metrics);
  void SetReachable(bool up);
  void OnError(RdKafka::Event& event);
  void OnStatistics(const std::string& json_text);
  void ReportFatal();

  Options options_;
  AgentMetrics* metrics_;
  std::unique_ptr<Callbacks> callbacks_;
  std::unique_ptr<RdKafka::Producer> producer_;
  // Held for the producer's life so that librdkafka looks the topic and its
  // partition leaders up (and connects to them) at start, not when the first
  // fault is produced: that lookup cost the first event ~250-500 ms.
  std::unique_ptr<RdKafka::Topic> topic_;
  std::atomic<bool> reachable_{false};
  std::atomic<bool> fatal_{false};
  bool fatal_reported_ = false;
  std::uint64_t transport_errors_ = 0;
  friend struct Callbacks;
};

}  // namespace faultline
