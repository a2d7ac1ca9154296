// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/node_pods.h"

#include "tainter/kube/kube_node_api.h"

namespace faultline {

using nlohmann::json;

std::string PodsOnNodeSelector(std::string_view node) {
  return "spec.nodeName=" + std::string(node) + ",status.phase!=Succeeded,status.phase!=Failed";
}

Result<std::vector<PodInfo>> ListPodsOnNode(NodeApi& api, std::string_view node) {
  Result<PodListing> listing = api.ListPodsAt(PodsOnNodeSelector(node));
  if (!listing) return listing.error();
  return std::move(listing->pods);
}

namespace {

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<NodePod> NodePodFromJson(const json& pod) {
  if (!pod.is_object() || !pod.contains("metadata")) {
    return InvalidArgumentError("pod without metadata");
  }
  const json& meta = pod["metadata"];
  NodePod p;
  p.name = StringAt(meta, "name");
  p.namespace_name = StringAt(meta, "namespace");
  if (p.name.empty()) return InvalidArgumentError("pod without a name");
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    p.mirror = meta["annotations"].contains("kubernetes.io/config.mirror");
  }
  p.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (meta.contains("ownerReferences") && meta["ownerReferences"].is_array()) {
    for (const json& ref : meta["ownerReferences"]) {
      if (ref.is_object() && ref.value("controller", false)) p.owner_kind = StringAt(ref, "kind");
    }
  }
  if (pod.contains("status")) p.phase = StringAt(pod["status"], "phase");
  return p;
}

Result<std::vector<NodePod>> ListPodsOnNode(KubeHttpClient& http, std::string_view node) {
  if (node.empty()) return InvalidArgumentError("list pods: empty node name");
  std::vector<NodePod> pods;
  std::string continue_token;
  const std::string what = "list pods on " + std::string(node);
  for (;;) {
    std::string path =
        "/api/v1/pods?fieldSelector=" + UrlEncode("spec.nodeName=" + std::string(node)) +
        "&limit=500";
    if (!continue_token.empty()) path += "&continue=" + UrlEncode(continue_token);
    auto response =
        http.Send({.verb = "list", .method = "GET", .path = path, .content_type = {}, .body = {}});
    if (!response) return response.error();
    if (response->status == 429) return UnavailableError(what + ": HTTP 429");
    if (response->status != 200) return StatusFromResponse(*response, what);
    json list;
    try {
      list = json::parse(response->body);
    } catch (const json::exception&) {
      return InternalError(what + ": response is not JSON");
    }
    if (list.contains("items") && list["items"].is_array()) {
      for (const json& item : list["items"]) {
        if (auto p = NodePodFromJson(item); p) pods.push_back(std::move(*p));
      }
    }
    continue_token = list.contains("metadata") ? StringAt(list["metadata"], "continue") : "";
    if (continue_token.empty()) return pods;
  }
}

}  // namespace faultline
