// SPDX-License-Identifier: Apache-2.0
// The applier's pod notices: after a new taint, a Warning Event on each pod
// of the node (which pods and what they say: tainter/core/pod_events.h).
#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/kube/node_pods.h"

namespace faultline {

void Tainter::TellPods(const std::string& node, const Reason& reason) {
  auto count = [&](const char* outcome, std::size_t n = 1) { m_.PodEvents(outcome).Inc(n); };
  if (api_.pods == nullptr) return;  // no pods in this mode (the standalone agent, by design)
  Result<std::vector<PodInfo>> pods = ListPodsOnNode(*api_.pods, node);
  if (!pods) {
    count("list_failed");
    LogWarning("tainter", "cannot list the node's pods to tell them",
               {{"node", node}, {"error", pods.error().ToString()}});
    return;
  }
  PodEventPlan plan = BuildPodEvents(node, reason, std::move(*pods), options_.pod_events.max_pods);
  if (plan.over_bound > 0) {
    count("over_bound", plan.over_bound);
    LogWarning("tainter", "more pods on the node than pod_events.max_pods; not all were told",
               {{"node", node}, {"told", plan.events.size()}, {"left_out", plan.over_bound}});
  }
  for (std::size_t i = 0; i < plan.events.size(); ++i) {
    const NodeEvent& e = plan.events[i];
    Status s = RecordEvent(e);
    if (s.ok()) {
      count("recorded");
      continue;
    }
    count("failed");
    LogWarning("tainter", "cannot record a pod's Event",
               {{"node", node},
                {"pod", e.subject->namespace_name + "/" + e.subject->name},
                {"error", s.ToString()}});
    if (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnauthenticated) {
      count("failed", plan.events.size() - i - 1);  // the API is away: the rest would fail too
      return;
    }
  }
}

}  // namespace faultline
