// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/node_identity.h"
#include "base/status.h"

namespace RdKafka {
class Producer;
}

namespace faultline {

// Publishes this node's identity (base/node_identity.h: interface
// addresses, InfiniBand/RoCE port GIDs from sysfs, hostname, boot id) as one
// Kafka message keyed by the node on a compacted topic, at start and every
// `interval`, so the tainter can resolve the addresses NCCL prints (a peer's
// IP or GID) to nodes. The topic keeps the latest per node; a new boot or a
// re-addressed interface replaces the old identity.
//
// Threads: one of its own (publishes, waits `interval`), stopped by Stop().
class IdentityPublisher {
 public:
  struct Options {
    std::string brokers;
    std::string topic = "faultline.identity";
    std::map<std::string, std::string> properties;  // the agent's kafka.properties
    std::chrono::milliseconds interval{std::chrono::minutes(5)};
    std::string sysfs_root = "/sys";  // reads <root>/class/infiniband/*/ports/*/gids/*
    std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
    std::string node;
    const Clock* clock = &RealClock();  // the identity's `published` time and the interval
  };

  // What would be published now: never fails (a part that cannot be read
  // is left empty).
  static NodeIdentity Collect(const Options& options);

  // kInvalidArgument: a property librdkafka rejects.
  static Result<std::unique_ptr<IdentityPublisher>> Create(Options options,
                                                           MetricsRegistry& metrics);
  ~IdentityPublisher();
  void Start();
  // Stops the thread and flushes what is queued (bounded by `timeout`).
  void Stop(std::chrono::milliseconds timeout = std::chrono::seconds(2));

 private:
  IdentityPublisher(Options options, MetricsRegistry& metrics);
  void Publish();
  void Run();

  Options options_;
  Counter& published_;  // faultline_agent_identity_published_total
  Counter& errors_;     // faultline_agent_identity_errors_total
  std::unique_ptr<RdKafka::Producer> producer_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace faultline
