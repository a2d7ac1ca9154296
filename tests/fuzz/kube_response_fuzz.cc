// SPDX-License-Identifier: Apache-2.0
// What the tainter does with an API server's response body: the error
// message it extracts from a Status object (or from any text), the Node and
// NodeList it reads, and the JSON Patch it builds from a Node as read. A
// proxy, a misconfigured server or an attacker in the path controls these
// bytes. Beyond "no crash": error messages stay bounded, and every patch
// starts with the resourceVersion test and removes only taints that exist.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tainter/kube/kube_http.h"
#include "tainter/kube/kube_node_json.h"

namespace {

using nlohmann::json;

void CheckPatch(const json& node, const faultline::NodeChange& change) {
  const json patch = faultline::BuildNodePatch(node, change);
  if (!patch.is_array()) std::abort();
  if (patch.empty()) return;
  if (patch[0].value("op", "") != "test" ||
      patch[0].value("path", "") != "/metadata/resourceVersion") {
    std::abort();
  }
  std::size_t taints = 0;
  if (node.is_object() && node.contains("spec") && node["spec"].is_object() &&
      node["spec"].contains("taints") && node["spec"]["taints"].is_array()) {
    taints = node["spec"]["taints"].size();
  }
  for (const json& op : patch) {
    const std::string path = op.value("path", "");
    if (op.value("op", "") == "remove" && path.rfind("/spec/taints/", 0) == 0) {
      if (std::stoul(path.substr(13)) >= taints) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // First byte: the HTTP status; the rest: the body.
  static constexpr long kStatuses[] = {400, 401, 403, 404, 409, 422, 429, 500, 503, 302};
  faultline::KubeResponse response;
  response.status = kStatuses[data[0] % (sizeof(kStatuses) / sizeof(kStatuses[0]))];
  response.body.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  faultline::Status status = faultline::StatusFromResponse(response, "fuzz");
  if (status.ok() || status.message().size() > 400) std::abort();

  const json body = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  faultline::NodeTaint ours{.key = "faultline.dev/faulty", .value = "true"};
  faultline::NodeChange add{.add_taint = ours, .annotations = {{"faultline.dev/reasons", "{}"}}};
  faultline::NodeChange lift{.remove_taint = ours, .annotations = {{"faultline.dev/reasons", {}}}};
  faultline::NodeChange swap{
      .add_taint = faultline::NodeTaint{.key = ours.key, .effect = "NoExecute"},
      .remove_taint = ours};
  auto info = faultline::NodeInfoFromJson(body);
  if (info.ok() && info->name.empty()) std::abort();
  CheckPatch(body, add);
  CheckPatch(body, lift);
  CheckPatch(body, swap);
  if (body.is_object() && body.contains("items") && body["items"].is_array()) {
    for (const json& item : body["items"]) {
      (void)faultline::NodeInfoFromJson(item);
      CheckPatch(item, add);
    }
  }
  return 0;
}
