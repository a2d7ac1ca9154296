// SPDX-License-Identifier: Apache-2.0
#pragma once

// The pods running on one node, for whoever acts on the node's pods: the pod
// Events when faultline takes a node out (through the NodeApi) and drain
// (through the eviction client). Both read the same listing, one request per
// page, into PodInfo.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tainter/kube/kube_http.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The field selector of the pods running on `node`:
//   spec.nodeName=<node>,status.phase!=Succeeded,status.phase!=Failed
// kube-apiserver selects pods by spec.nodeName and status.phase (its
// PodToSelectableFields), so finished pods never leave the server and the
// answer is current (no informer cache, no bound on a pod index). kubectl
// drain selects by spec.nodeName too.
std::string PodsOnNodeSelector(std::string_view node);

// The pod listing: GET /api/v1/pods?fieldSelector=SELECTOR&limit=PAGE_SIZE,
// every page (continue), every namespace. KubeNodeApi::ListPodsAt and
// KubeEvictionApi::ListPodsOnNode are this call. Errors as node_api.h.
Result<PodListing> ListPods(KubeHttpClient& http, std::string_view field_selector,
                            std::size_t page_size);

// The pods on `node` through a PodApi (one ListPodsAt with the selector
// above): the pod Events, which go through the dry-run API and fakes.
// Errors: the PodApi's.
Result<std::vector<PodInfo>> ListPodsOnNode(PodApi& api, std::string_view node);

}  // namespace faultline
