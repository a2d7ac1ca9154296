// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/node_pods.h"

#include <nlohmann/json.hpp>

#include "tainter/kube/kube_node_api.h"
#include "tainter/kube/kube_node_json.h"

namespace faultline {

std::string PodsOnNodeSelector(std::string_view node) {
  return "spec.nodeName=" + std::string(node) + ",status.phase!=Succeeded,status.phase!=Failed";
}

Result<PodListing> ListPods(KubeHttpClient& http, std::string_view field_selector,
                            std::size_t page_size) {
  PodListing listing;
  std::string path = "/api/v1/pods";
  if (!field_selector.empty()) path += "?fieldSelector=" + UrlEncode(field_selector);
  auto version = ListPages(http, path, "list pods", page_size, [&](const nlohmann::json& item) {
    auto info = PodInfoFromJson(item);
    if (info) listing.pods.push_back(std::move(*info));
  });
  if (!version) return version.error();
  listing.resource_version = std::move(*version);
  return listing;
}

Result<std::vector<PodInfo>> ListPodsOnNode(PodApi& api, std::string_view node) {
  Result<PodListing> listing = api.ListPodsAt(PodsOnNodeSelector(node));
  if (!listing) return listing.error();
  return std::move(listing->pods);
}

}  // namespace faultline
