// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The standalone agent's API (nodes and Events; it has no pods, watch or
// shared valve record, and its stack passes none to the applier), which
// lets it touch its own node and nothing else: GetNode, UpdateNode and CreateEvent for any other
// node fail with kPermissionDenied before reaching `inner`, and ListNodes never lists (the agent's
// RBAC has no `list`): it is answered with one GetNode of the own node, filtered by the selector,
// and an empty list when the node does not exist. So the embedded Tainter's AdoptAll() and resync
// read exactly one node.
//
// Thread-safety: as `inner` (one thread at a time). `inner` and `events`
// must outlive it.
class OwnNodeApi final : public NodeApi, public EventApi {
 public:
  OwnNodeApi(std::string own_node, NodeApi& inner, EventApi& events)
      : own_node_(std::move(own_node)), inner_(inner), events_(events) {}

  Result<NodeInfo> GetNode(std::string_view name) override;
  // kInvalidArgument: a selector the tainter's LabelSelector cannot parse.
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  Status CreateEvent(const NodeEvent& event) override;
  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override;

  const std::string& own_node() const { return own_node_; }

 private:
  Status Check(std::string_view name, std::string_view what) const;

  const std::string own_node_;
  NodeApi& inner_;
  EventApi& events_;
};

}  // namespace faultline
