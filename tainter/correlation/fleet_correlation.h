// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/core/node_model.h"
#include "tainter/core/policy.h"
#include "tainter/correlation/correlation_consumer.h"
#include "tainter/correlation/correlation_metrics.h"
#include "tainter/correlation/correlator.h"

namespace faultline {

// What one Tick found for the applier to do. Correlation decides; it holds
// no applier: the daemon hands `blames` to NodeApplier::Handle and records
// `events` (tainter/daemon/tainter_stack.cc).
struct CorrelationNews {
  // Accusations now due against nodes this replica owns, as events.
  std::vector<FaultEvent> blames;
  // One Event to record about a closed incident: on the job's owner
  // (`subject` set) or on the node it is attributed to.
  struct IncidentEvent {
    std::string job;
    std::optional<NodeEvent> owner;  // on the job's owner object (PyTorchJob, Job ...)
    std::string node;                // attributed: the node, else empty
    PlannedEvent node_event;         // attributed: the Event on `node`
  };
  std::vector<IncidentEvent> events;
};

// The daemon's attribution stage, wired: the Correlator fed by a
// CorrelationConsumer (every partition) and the node watch (addresses); each
// Tick returns the due accusations of nodes this replica owns, as events,
// and the Events of the closed incidents this replica owns (the attributed
// node's owner, or, unattributed, the job key's), logged and counted here.
//
// Thread-safety: one thread (the daemon's main loop).
class FleetCorrelation {
 public:
  using Owns = std::function<bool(const std::string& key)>;

  static Result<std::unique_ptr<FleetCorrelation>> Create(CorrelationConsumer::Options kafka,
                                                          const Correlator::Options& options,
                                                          MetricsRegistry& metrics,
                                                          const Clock& clock);

  // For NodeApplier::SetBlamesPeer: true for an event blaming a peer the
  // correlator knows (not held against its own node). Valid while this lives.
  std::function<bool(const FaultEvent& event)> BlamesPeer();
  void ObserveNodes(const std::vector<NodeWatchChange>& changes);
  // The pod watch: pod IPs and controllers (PodIndex).
  void ObservePods(const std::vector<PodWatchChange>& changes);
  // Starts reading (retried by Poll until the topic exists).
  void Poll(std::chrono::milliseconds timeout);
  // The identities and recent history are read (or 10 s passed): the
  // deciding consumer may start, its reporters' lines will resolve.
  bool ready() const;
  CorrelationNews Tick(const Owns& owns);
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
