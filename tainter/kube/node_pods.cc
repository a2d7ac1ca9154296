// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/node_pods.h"

namespace faultline {

std::string PodsOnNodeSelector(std::string_view node) {
  return "spec.nodeName=" + std::string(node) + ",status.phase!=Succeeded,status.phase!=Failed";
}

Result<std::vector<PodInfo>> ListPodsOnNode(NodeApi& api, std::string_view node) {
  Result<PodListing> listing = api.ListPodsAt(PodsOnNodeSelector(node));
  if (!listing) return listing.error();
  return std::move(listing->pods);
}

}  // namespace faultline
