// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tainter/core/node_model.h"
#include "tainter/core/reasons.h"

namespace faultline {

// Telling the job (issue 15): when faultline takes a node out of scheduling,
// a Warning Event on each pod running there, so `kubectl describe pod` (and
// the job's own tooling, which reads its pods' Events) says why the pod's
// node went away without asking the infra team.
struct PodEventOptions {
  bool enabled = true;
  // At most this many pods are told per decision (a node runs ~110 pods at
  // most by default; a GPU node a handful). Past it, the rest are counted.
  std::size_t max_pods = 50;
  // While at most this many nodes were taken out in the last minute, each
  // one's pods are listed by node at once (one request, exact at the moment
  // of the taint). Past it (a storm: a bad rule, a spine switch) the nodes
  // wait up to `batch_delay` and share one listing of every running pod of
  // the cluster, so the listing is not paid per taint when the client's QPS
  // is what bounds the storm. 0: always shared.
  std::size_t node_lists_per_minute = 6;
  std::chrono::seconds batch_delay{10};
};

inline constexpr std::string_view kPodEventReason = "FaultlineNodeTakenOut";

// "PyTorchJob/train-llm" from the pod's controller ownerReference; empty
// without one.
std::string PodOwnerName(const PodInfo& pod);

// Node infrastructure, not a job: a DaemonSet's pod (it tolerates the taint
// and stays, like faultline's own agent) or a static pod (its mirror is owned
// by the Node). Nobody's job died with it; it is not told.
bool IsNodeInfrastructure(const PodInfo& pod);

// "node gpu-17 taken out of scheduling: Xid 79, GPU fell off the bus (rule nvidia.xid)".
std::string TakenOutMessage(std::string_view node, const Reason& reason);

struct PodEventPlan {
  std::vector<NodeEvent> events;   // at most max_pods, ordered by namespace/name
  std::size_t infrastructure = 0;  // DaemonSet and static pods left out
  std::size_t over_bound = 0;      // job pods left out by max_pods
};

// The Events for the pods on `node` (as ListPodsOnNode gives them): each a
// Warning kPodEventReason about the Pod (its namespace, name and uid), the
// message TakenOutMessage plus the pod's owner. Pure; the order is stable so
// that which pods are told past the bound does not depend on the list.
PodEventPlan BuildPodEvents(const std::string& node, const Reason& reason,
                            std::vector<PodInfo> pods, std::size_t max_pods);

}  // namespace faultline
