// SPDX-License-Identifier: Apache-2.0
#include "collector/standalone/own_node_api.h"

#include "tainter/core/label_selector.h"

namespace faultline {

Status OwnNodeApi::Check(std::string_view name, std::string_view what) const {
  if (name == own_node_) return OkStatus();
  // A bug, not an RBAC answer: the standalone agent must never name another
  // node. Refused here so that a bug cannot reach the API server.
  return PermissionDeniedError("standalone agent for node '" + own_node_ + "' may not " +
                               std::string(what) + " node '" + std::string(name) + "'");
}

Result<NodeInfo> OwnNodeApi::GetNode(std::string_view name) {
  FL_RETURN_IF_ERROR(Check(name, "read"));
  return inner_.GetNode(name);
}

Result<std::vector<NodeInfo>> OwnNodeApi::ListNodes(std::string_view label_selector) {
  Result<LabelSelector> selector = LabelSelector::Parse(label_selector);
  if (!selector) return selector.error();
  Result<NodeInfo> node = inner_.GetNode(own_node_);
  std::vector<NodeInfo> out;
  if (!node) {
    if (node.error().code() == StatusCode::kNotFound) return out;
    return node.error();
  }
  if (selector->Matches(node->labels)) out.push_back(std::move(*node));
  return out;
}

Status OwnNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  FL_RETURN_IF_ERROR(Check(name, "update"));
  return inner_.UpdateNode(name, change);
}

Status OwnNodeApi::PatchNodeConditions(std::string_view name,
                                       const std::vector<NodeCondition>& conditions) {
  FL_RETURN_IF_ERROR(Check(name, "set conditions on"));
  return inner_.PatchNodeConditions(name, conditions);
}

Status OwnNodeApi::CreateEvent(const NodeEvent& event) {
  FL_RETURN_IF_ERROR(Check(event.node, "record an Event about"));
  return events_.CreateEvent(event);
}

}  // namespace faultline
