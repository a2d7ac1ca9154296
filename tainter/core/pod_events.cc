// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/pod_events.h"

#include <algorithm>
#include <tuple>

namespace faultline {

std::string PodOwnerName(const PodInfo& pod) {
  if (pod.owner_name.empty()) return {};
  return pod.owner_kind + "/" + pod.owner_name;
}

bool IsNodeInfrastructure(const PodInfo& pod) {
  return (pod.owner_kind == "DaemonSet" && pod.owner_api_version == "apps/v1") ||
         (pod.owner_kind == "Node" && pod.owner_api_version == "v1");
}

std::string TakenOutMessage(std::string_view node, const Reason& reason) {
  std::string m = "node " + std::string(node) + " taken out of scheduling: ";
  m += reason.summary.empty() ? reason.rule : reason.summary;
  if (!reason.summary.empty() && !reason.rule.empty()) m += " (rule " + reason.rule + ")";
  return m;
}

PodEventPlan BuildPodEvents(const std::string& node, const Reason& reason,
                            std::vector<PodInfo> pods, std::size_t max_pods) {
  PodEventPlan plan;
  std::sort(pods.begin(), pods.end(), [](const PodInfo& a, const PodInfo& b) {
    return std::tie(a.namespace_name, a.name) < std::tie(b.namespace_name, b.name);
  });
  const std::string message = TakenOutMessage(node, reason);
  for (const PodInfo& pod : pods) {
    if (pod.node_name != node) continue;  // a list answered for another node: never told
    if (IsNodeInfrastructure(pod)) {
      ++plan.infrastructure;
      continue;
    }
    if (plan.events.size() >= max_pods) {
      ++plan.over_bound;
      continue;
    }
    NodeEvent e;
    e.node = node;
    e.subject = EventSubject{"v1", "Pod", pod.namespace_name, pod.name, pod.uid};
    e.type = "Warning";
    e.reason = std::string(kPodEventReason);
    e.message = message;
    if (std::string owner = PodOwnerName(pod); !owner.empty()) {
      e.message += "; this pod of " + owner + " ran there";
    }
    plan.events.push_back(std::move(e));
  }
  return plan;
}

}  // namespace faultline
