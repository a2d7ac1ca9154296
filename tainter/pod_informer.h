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

// The pods fleet correlation needs (tainter/correlation/pod_index.h), kept
// current the way NodeInformer keeps the nodes: list every namespace's pods
// that have an IP (field selector `status.podIP!=`, which kube-apiserver
// supports for pods), then watch from the list's version; a watch that
// ends is resumed from the last version seen, 410 Gone lists again. A pod
// that loses its IP or is deleted comes as DELETED.
//
// Only PodInfo (node, IPs, controller) is kept of each Pod; the bound on
// how many is the PodIndex's.
//
// Metrics: faultline_tainter_pod_watch_restarts_total{why=timeout|error|gone}.
//
// Thread-safety: Take(), synced() and Stop() from any one thread.
class PodInformer {
 public:
  struct Options {
    std::string field_selector = "status.podIP!=";
    std::chrono::seconds watch_timeout{std::chrono::minutes(5)};
    std::chrono::milliseconds retry_delay{std::chrono::seconds(1)};  // after a failed call
  };
  struct Change {
    enum class Kind : std::uint8_t {
      kList,     // `pods` is the complete set (after a list or a re-list)
      kUpsert,   // pods[0] was added or modified
      kDeleted,  // pods[0] was deleted (or lost its IP)
    };
    Kind kind = Kind::kUpsert;
    std::vector<PodInfo> pods;
  };

  // `api` is used only on the informer's thread and must outlive it.
  PodInformer(NodeApi& api, Options options, MetricsRegistry& metrics);
  ~PodInformer();  // Stop()
  PodInformer(const PodInformer&) = delete;
  PodInformer& operator=(const PodInformer&) = delete;

  void Start();
  void Stop();
  std::vector<Change> Take();
  bool synced() const { return synced_.load(); }
  // The last list or watch call failed (API server unreachable, RBAC).
  bool failing() const { return failing_.load(); }
  // This NodeApi cannot list pods: the informer has stopped for good.
  bool unsupported() const { return unsupported_.load(); }

 private:
  void Run();
  void Push(Change change);
  void Pause();

  NodeApi& api_;
  const Options options_;
  MetricsRegistry& metrics_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> failing_{false};
  std::atomic<bool> unsupported_{false};
  std::mutex mu_;
  std::vector<Change> changes_;
};

}  // namespace faultline
