// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// Pure conversions between core/v1 JSON and the NodeApi types. No I/O, no
// clock: each is unit-tested with literal JSON.

// core/v1 Node -> NodeInfo. Errors: kInvalidArgument when it is not a Node
// object (no metadata.name).
Result<NodeInfo> NodeInfoFromJson(const nlohmann::json& node);

// core/v1 Pod -> PodInfo (namespace, name, spec.nodeName, status.podIPs
// else status.podIP, spec.hostNetwork, the ownerReference with
// controller: true). Errors: kInvalidArgument when it has no metadata.name.
Result<PodInfo> PodInfoFromJson(const nlohmann::json& pod);

// The strategic merge patch body that sets `conditions` on nodes/status:
// {"status":{"conditions":[{type,status,reason,message,lastHeartbeatTime,
// lastTransitionTime}, ...]}} (times only when set). Sent to the status
// subresource as application/strategic-merge-patch+json, the API server
// merges the list by `type`: other conditions stay as they are.
nlohmann::json BuildConditionsPatch(const std::vector<NodeCondition>& conditions);

// core/v1 Taint; value and timeAdded only when set.
nlohmann::json TaintToJson(const NodeTaint& taint);

// RFC 6901: "~" -> "~0", "/" -> "~1". "faultline.dev/reasons" ->
// "faultline.dev~1reasons".
std::string EscapeJsonPointer(std::string_view token);

// The RFC 6902 JSON Patch that applies `change` to `node` (as read from the
// server) without touching anything else, or an empty array when the change
// is already in effect (nothing to send).
//
// The first operation always tests /metadata/resourceVersion, so a
// concurrent write makes the whole patch fail instead of being overwritten.
// Taints: with no spec.taints, `add /spec/taints` with the whole array (a
// real API server answers 422 to `add /spec/taints/-` there); otherwise
// `add /spec/taints/-`. A removal tests the exact taint at its index before
// removing it. Annotations: add / replace / remove per key with escaped
// pointers; with no metadata.annotations, one `add /metadata/annotations`.
nlohmann::json BuildNodePatch(const nlohmann::json& node, const NodeChange& change);

// The core/v1 Node JSON BuildNodePatch reads, from a picture of the node
// (NodeBase: the watch's, not a read): metadata name, uid and
// resourceVersion; labels and annotations (the kept keys) whenever the node
// has the map, empty or not, so that a patch adds to it key by key and never
// replaces it; spec always (a node always has one: `add /spec` would replace
// it), spec.taints when there are any.
nlohmann::json NodeBaseToJson(const NodeBase& base);

// A core/v1 Event about a node, named deterministically
// (`<node>.<16 hex digits>` of node, type, reason and message) so a repeat
// of the same event can be found and counted instead of duplicated.
// The message is cut to `max_message_bytes` on a UTF-8 boundary.
struct EventOptions {
  std::string namespace_name = "default";
  std::string reporting_instance;  // e.g. the pod name; may be empty
  std::size_t max_message_bytes = 1024;
};
// With a subject (a Pod, a job's owner) the Event is about it and lives in
// its namespace (EventNamespace): the API server requires metadata.namespace
// == involvedObject.namespace. Without, about the Node, in
// options.namespace_name.
nlohmann::json BuildEventJson(const NodeEvent& event, std::chrono::system_clock::time_point now,
                              const EventOptions& options);
std::string EventNamespace(const NodeEvent& event, const EventOptions& options);

}  // namespace faultline
