// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/eviction.h"

#include <nlohmann/json.hpp>

#include "tainter/kube/kube_node_api.h"

namespace faultline {

using nlohmann::json;

namespace {

Result<json> Parse(const KubeResponse& response, const std::string& what) {
  try {
    return json::parse(response.body);
  } catch (const json::exception&) {
    return InternalError(what + ": response is not JSON");
  }
}

}  // namespace

Result<std::unique_ptr<KubeEvictionApi>> KubeEvictionApi::Create(KubeConfig config,
                                                                 KubeHttpClient::Options options,
                                                                 const Clock& clock,
                                                                 MetricsRegistry& metrics) {
  options.return_too_many_requests = true;
  auto http = KubeHttpClient::Create(std::move(config), std::move(options), clock, metrics);
  if (!http) return http.error();
  return std::make_unique<KubeEvictionApi>(std::move(*http));
}

Result<NodeScheduling> KubeEvictionApi::GetScheduling(std::string_view node) {
  const std::string what = "get node " + std::string(node);
  auto response = http_->Send({.verb = "get",
                               .method = "GET",
                               .path = "/api/v1/nodes/" + UrlEncode(node),
                               .content_type = {},
                               .body = {}});
  if (!response) return response.error();
  if (response->status == 429) return UnavailableError(what + ": HTTP 429");
  if (response->status != 200) return StatusFromResponse(*response, what);
  Result<json> body = Parse(*response, what);
  if (!body) return body.error();
  NodeScheduling s;
  const json& meta = (*body)["metadata"];
  if (meta.is_object()) {
    s.resource_version = meta.value("resourceVersion", "");
    if (meta.contains("annotations") && meta["annotations"].is_object()) {
      for (const auto& [k, v] : meta["annotations"].items()) {
        if (v.is_string()) s.annotations[k] = v.get<std::string>();
      }
    }
  }
  if (body->contains("spec") && (*body)["spec"].is_object()) {
    const json& spec = (*body)["spec"];
    s.unschedulable = spec.contains("unschedulable") && spec["unschedulable"].is_boolean() &&
                      spec["unschedulable"].get<bool>();
  }
  return s;
}

Status KubeEvictionApi::PatchScheduling(std::string_view node, const SchedulingChange& change) {
  const std::string what = "patch node " + std::string(node);
  json patch = json::object();
  if (!change.expected_resource_version.empty()) {
    patch["metadata"]["resourceVersion"] = change.expected_resource_version;
  }
  for (const auto& [key, value] : change.annotations) {
    patch["metadata"]["annotations"][key] = value ? json(*value) : json(nullptr);
  }
  if (change.unschedulable) {
    // null removes the field: an uncordoned node has none (kubectl uncordon).
    patch["spec"]["unschedulable"] = *change.unschedulable ? json(true) : json(nullptr);
  }
  auto response = http_->Send({.verb = "patch",
                               .method = "PATCH",
                               .path = "/api/v1/nodes/" + UrlEncode(node),
                               .content_type = "application/merge-patch+json",
                               .body = patch.dump()});
  if (!response) return response.error();
  if (response->status == 429) return UnavailableError(what + ": HTTP 429");
  if (response->status == 200) return OkStatus();
  return StatusFromResponse(*response, what);
}

Result<std::vector<PodInfo>> KubeEvictionApi::ListPodsOnNode(std::string_view node) {
  if (node.empty()) return InvalidArgumentError("list pods: empty node name");
  Result<PodListing> listing = ListPods(*http_, PodsOnNodeSelector(node), kPodPageSize);
  if (!listing) return listing.error();
  return std::move(listing->pods);
}

Result<EvictionOutcome> KubeEvictionApi::Evict(std::string_view ns, std::string_view pod,
                                               std::optional<std::chrono::seconds> grace) {
  const std::string what = "evict pod " + std::string(ns) + "/" + std::string(pod);
  json eviction = {{"apiVersion", "policy/v1"},
                   {"kind", "Eviction"},
                   {"metadata", {{"name", std::string(pod)}, {"namespace", std::string(ns)}}}};
  if (grace) eviction["deleteOptions"] = {{"gracePeriodSeconds", grace->count()}};
  auto response = http_->Send(
      {.verb = "create",
       .method = "POST",
       .path = "/api/v1/namespaces/" + UrlEncode(ns) + "/pods/" + UrlEncode(pod) + "/eviction",
       .content_type = "application/json",
       .body = eviction.dump()});
  if (!response) return response.error();
  if (response->status == 200 || response->status == 201) return EvictionOutcome::kEvicted;
  if (response->status == 404) return EvictionOutcome::kGone;
  if (response->status == 429) {
    // The budget's refusal names its cause; a 429 without it is the API
    // server shedding load: both mean "later", but only one is the budget.
    Result<json> body = Parse(*response, what);
    if (body && body->contains("details") && (*body)["details"].contains("causes") &&
        (*body)["details"]["causes"].is_array()) {
      for (const json& c : (*body)["details"]["causes"]) {
        if (c.is_object() && c.value("reason", "") == "DisruptionBudget") {
          return EvictionOutcome::kBlockedByBudget;
        }
      }
    }
    if (body && body->value("message", "").find("disruption budget") != std::string::npos) {
      return EvictionOutcome::kBlockedByBudget;
    }
    return UnavailableError(what + ": HTTP 429");
  }
  return StatusFromResponse(*response, what);
}

}  // namespace faultline
