// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/metrics.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// Keeps the tainter's picture of the nodes current, the client-go informer
// way: list the nodes (with the list's resourceVersion), then watch from
// that version; when a watch ends (server timeout, connection lost), watch
// again from the last version seen; on 410 Gone (the version was compacted
// away), list again. So a by-hand untaint, a `kubectl edit` or another
// replica's write reaches the tainter within the watch's latency instead of
// at the next poll.
//
// The list and the watch run on the informer's own thread, through their
// own NodeApi (one client per thread, node_api.h); the owner takes the
// changes with Take() on its thread and applies them (Tainter::Observe*).
//
// Metrics: faultline_tainter_node_watch_restarts_total{why=timeout|error|gone}.
//
// Thread-safety: Take(), synced() and Stop() from any one thread.
class NodeInformer {
 public:
  struct Options {
    std::string label_selector;
    std::chrono::seconds watch_timeout{std::chrono::minutes(5)};
    std::chrono::milliseconds retry_delay{std::chrono::seconds(1)};  // after a failed call
  };
  // What changed since the last Take(), in order.
  struct Change {
    enum class Kind : std::uint8_t {
      kList,     // `nodes` is the complete set (after a list or a re-list)
      kUpsert,   // nodes[0] was added or modified
      kDeleted,  // nodes[0] was deleted (or stopped matching the selector)
    };
    Kind kind = Kind::kUpsert;
    std::vector<NodeInfo> nodes;
  };

  // `api` is used only on the informer's thread and must outlive it.
  NodeInformer(NodeApi& api, Options options, MetricsRegistry& metrics);
  ~NodeInformer();  // Stop()
  NodeInformer(const NodeInformer&) = delete;
  NodeInformer& operator=(const NodeInformer&) = delete;

  void Start();
  void Stop();
  std::vector<Change> Take();
  // A list has succeeded at least once.
  bool synced() const { return synced_.load(); }
  // The last list or watch call failed (API server unreachable, RBAC).
  bool failing() const { return failing_.load(); }

 private:
  void Run();
  void Push(Change change);
  void Pause();  // retry_delay, or less when stopping

  NodeApi& api_;
  const Options options_;
  MetricsRegistry& metrics_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> failing_{false};
  std::mutex mu_;
  std::vector<Change> changes_;
};

}  // namespace faultline
