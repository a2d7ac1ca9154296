// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pods running on one node, for whoever acts on the node's pods: the pod
// Events when faultline takes a node out (through the NodeApi, as PodInfo),
// and drain (straight over the HTTP client, as NodePod, with what an eviction
// needs to know).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tainter/kube/kube_http.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The pods running on one node, for whoever acts on the node's pods (the
// pod Events when faultline takes a node out; cordon and drain). One list
// request, every namespace:
//   GET /api/v1/pods?fieldSelector=spec.nodeName=<node>,status.phase!=Succeeded,
//       status.phase!=Failed
// kube-apiserver selects pods by spec.nodeName and status.phase (its
// PodToSelectableFields), so finished pods never leave the server and the
// answer is current (no informer cache, no bound on a pod index).
// Errors: the NodeApi's (kFailedPrecondition: it cannot list pods).
Result<std::vector<PodInfo>> ListPodsOnNode(NodeApi& api, std::string_view node);

// The field selector above.
std::string PodsOnNodeSelector(std::string_view node);

// What a drain needs to know of a pod on the node: who it is, whether
// evicting it makes sense, and whether it is already leaving.
struct NodePod {
  std::string namespace_name;
  std::string name;
  std::string owner_kind;  // the controller ownerReference's kind ("DaemonSet", "ReplicaSet")
  std::string phase;       // status.phase
  bool mirror = false;     // annotation kubernetes.io/config.mirror: a static pod's mirror
  bool deleting = false;   // metadata.deletionTimestamp is set
};

// Reads one Pod object; kInvalidArgument when it has no name.
Result<NodePod> NodePodFromJson(const nlohmann::json& pod);

// The pods of every namespace bound to `node`: GET /api/v1/pods with
// fieldSelector=spec.nodeName=NODE (the same field selector kubectl drain
// uses), every page (limit + continue). Errors as node_api.h.
Result<std::vector<NodePod>> ListPodsOnNode(KubeHttpClient& http, std::string_view node);

}  // namespace faultline
