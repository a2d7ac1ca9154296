// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tainter/kube/kube_http.h"

namespace faultline {

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
