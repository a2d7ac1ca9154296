// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/fleet_correlation.h"

#include "base/log.h"
#include "base/time_format.h"
#include "tainter/correlation/incident_event.h"

namespace faultline {

FleetCorrelation::FleetCorrelation(const Correlator::Options& options, MetricsRegistry& metrics,
                                   const Clock& clock)
    : correlator_(options),
      metrics_(metrics),
      clock_(clock),
      created_(clock.MonotonicNow()),
      incident_window_(options.incidents.window) {}

Result<std::unique_ptr<FleetCorrelation>> FleetCorrelation::Create(
    CorrelationConsumer::Options kafka, const Correlator::Options& options,
    MetricsRegistry& metrics, const Clock& clock) {
  std::unique_ptr<FleetCorrelation> self(new FleetCorrelation(options, metrics, clock));
  auto consumer = CorrelationConsumer::Create(std::move(kafka), self->correlator_, metrics, clock);
  if (!consumer) return consumer.error();
  self->consumer_ = std::move(*consumer);
  Correlator* c = &self->correlator_;
  metrics.SetGaugeCallback("faultline_tainter_accusations", "accused nodes being counted", {},
                           [c] { return static_cast<double>(c->accusations()); });
  metrics.SetGaugeCallback("faultline_tainter_indexed_pods",
                           "pods whose IP and controller correlation keeps", {},
                           [c] { return static_cast<double>(c->pods().size()); });
  metrics.SetGaugeCallback("faultline_tainter_pods_not_indexed",
                           "pods left out of the index, over its bound", {},
                           [c] { return static_cast<double>(c->pods().dropped()); });
  metrics.SetGaugeCallback("faultline_tainter_open_incidents", "incidents still gathering lines",
                           {}, [c] { return static_cast<double>(c->open_incidents()); });
  return self;
}

std::function<bool(const FaultEvent& event)> FleetCorrelation::BlamesPeer() {
  return [this](const FaultEvent& e) { return correlator_.Accused(e).has_value(); };
}

void FleetCorrelation::ObserveNodes(const std::vector<NodeWatchChange>& changes) {
  for (const NodeWatchChange& c : changes) {
    for (const NodeInfo& n : c.objects) {
      if (c.kind == NodeWatchChange::Kind::kDeleted) {
        correlator_.addresses().Forget(n.name);
      } else {
        correlator_.addresses().Set(AddressBook::Witness::kNodeStatus, n.name, n.addresses);
      }
    }
  }
}

void FleetCorrelation::ObservePods(const std::vector<PodWatchChange>& changes) {
  PodIndex& index = correlator_.pods();
  for (const PodWatchChange& c : changes) {
    switch (c.kind) {
      case PodWatchChange::Kind::kList:
        index.Replace(c.objects);
        break;
      case PodWatchChange::Kind::kDeleted:
        for (const PodInfo& p : c.objects) index.Remove(p.namespace_name, p.name);
        break;
      case PodWatchChange::Kind::kUpsert:
        for (const PodInfo& p : c.objects) index.Upsert(p);
        break;
    }
  }
}

void FleetCorrelation::Poll(std::chrono::milliseconds timeout) {
  if (!consumer_->started()) {
    if (clock_.MonotonicNow() < next_start_) return;
    if (Status s = consumer_->Start(); !s.ok()) {
      LogWarning("correlation", "cannot read every partition yet; retrying",
                 {{"error", s.ToString()}});
      next_start_ = clock_.MonotonicNow() + std::chrono::seconds(5);
      return;
    }
  }
  consumer_->Poll(timeout);
}

bool FleetCorrelation::ready() const {
  return consumer_->caught_up() || clock_.MonotonicNow() - created_ > std::chrono::seconds(10);
}

CorrelationNews FleetCorrelation::Tick(const Owns& owns) {
  CorrelationNews news;
  const auto now = clock_.Now();
  // A node this replica does not own stays due here: its owner, reading the
  // same history, acts; if this replica gains it later, it acts then.
  for (FaultEvent& blame : correlator_.TakeBlames(now, owns)) {
    LogInfo("correlation", "peers blame node",
            {{"node", blame.node}, {"rule", blame.rule}, {"summary", blame.summary}});
    metrics_.Attributions(blame.rule).Inc();
    news.blames.push_back(std::move(blame));
  }
  // Incidents close only once the history is read: a partly rebuilt one
  // would be reported short.
  if (!consumer_->caught_up()) return news;
  for (const Incident& inc : correlator_.TakeIncidents(now)) {
    // Reported before a restart (it had closed before this process began).
    if (inc.end + incident_window_ < consumer_->started_at()) continue;
    if (!owns(inc.attributed.empty() ? inc.job : inc.attributed)) continue;
    std::string nodes;
    for (const std::string& n : inc.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    std::string evidence;
    for (const IncidentEvidence& ev : inc.evidence) {
      evidence += (evidence.empty() ? "" : "; ") + ev.node + " " + ev.rule;
    }
    LogInfo("correlation", "incident",
            {{"id", inc.id},
             {"job", inc.job},
             {"owner", inc.owner.name.empty() ? "" : inc.owner.kind + "/" + inc.owner.name},
             {"start", FormatRfc3339(inc.start)},
             {"nodes", inc.nodes.size()},
             {"node_names", nodes},
             {"attributed", inc.attributed},
             {"evidence", evidence}});
    metrics_.Incidents(!inc.attributed.empty()).Inc();
    // One Event per incident on the job's owner (PyTorchJob, Job ...), so
    // the job's own events say what happened to it, attributed or not; and,
    // attributed, one on the node, so `kubectl describe node` says which
    // job's failure it caused.
    CorrelationNews::IncidentEvent& out = news.events.emplace_back();
    out.job = inc.job;
    out.owner = IncidentOwnerEvent(inc);
    if (inc.attributed.empty()) continue;
    std::string message = "incident of job " + inc.job + " on " + std::to_string(inc.nodes.size()) +
                          " nodes at " + FormatRfc3339(inc.start) +
                          " attributed to this node: " + evidence;
    if (message.size() > 1024) message.resize(1024);
    out.node = inc.attributed;
    out.node_event = {"Warning", "FaultlineIncident", std::move(message)};
  }
  return news;
}

}  // namespace faultline
