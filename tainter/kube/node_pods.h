// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
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

}  // namespace faultline
