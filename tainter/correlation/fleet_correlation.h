// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/correlation/correlation_consumer.h"
#include "tainter/correlation/correlation_metrics.h"
#include "tainter/correlation/correlator.h"
#include "tainter/watch/node_informer.h"
#include "tainter/watch/pod_informer.h"
#include "tainter/apply/node_applier.h"

namespace faultline {

// The daemon's attribution stage, wired: the Correlator fed by a
// CorrelationConsumer (every partition) and the node watch (addresses); on
// each Tick the due accusations of nodes this replica owns go to its
// Tainter as events, and closed incidents are logged and counted by the
// replica that owns the attributed node (or, unattributed, the job's key).
//
// Thread-safety: one thread (the daemon's main loop).
class FleetCorrelation {
 public:
  using Owns = std::function<bool(const std::string& key)>;

  static Result<std::unique_ptr<FleetCorrelation>> Create(CorrelationConsumer::Options kafka,
                                                          const Correlator::Options& options,
                                                          MetricsRegistry& metrics,
                                                          const Clock& clock);

  // Wires `tainter`: events blaming a peer the correlator knows are not held
  // against their own node.
  void Attach(Tainter& tainter);
  void ObserveNodes(const std::vector<NodeInformer::Change>& changes);
  // The pod watch: pod IPs and controllers (PodIndex).
  void ObservePods(const std::vector<PodInformer::Change>& changes);
  // Starts reading (retried by Poll until the topic exists).
  void Poll(std::chrono::milliseconds timeout);
  // The identities and recent history are read (or 10 s passed): the
  // deciding consumer may start, its reporters' lines will resolve.
  bool ready() const;
  void Tick(Tainter& tainter, const Owns& owns);
  void Close() { consumer_->Close(); }
  Correlator& correlator() { return correlator_; }

 private:
  FleetCorrelation(const Correlator::Options& options, MetricsRegistry& metrics,
                   const Clock& clock);

  Correlator correlator_;
  CorrelationMetrics metrics_;
  const Clock& clock_;
  std::unique_ptr<CorrelationConsumer> consumer_;
  std::chrono::steady_clock::time_point created_;
  std::chrono::steady_clock::time_point next_start_{};
  std::chrono::seconds incident_window_;
};

}  // namespace faultline
