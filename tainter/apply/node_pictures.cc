// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/node_pictures.h"

namespace faultline {
namespace {

// Of `from`, only `keys`.
void KeepKeys(const std::map<std::string, std::string>& from, const std::vector<std::string>& keys,
              std::map<std::string, std::string>& to) {
  to.clear();
  for (const std::string& k : keys) {
    if (auto it = from.find(k); it != from.end()) to.emplace(*it);
  }
}

}  // namespace

void NodePictures::Keep(const NodeInfo& node) {
  NodeBase& base = pictures_[node.name];
  base.node.name = node.name;
  base.node.uid = node.uid;
  base.node.resource_version = node.resource_version;
  base.node.taints = node.taints;
  base.node.conditions = node.conditions;  // SyncConditions' input, as after a GET
  base.has_labels = !node.labels.empty();
  base.has_annotations = !node.annotations.empty();
  KeepKeys(node.labels, label_keys_, base.node.labels);
  KeepKeys(node.annotations, annotation_keys_, base.node.annotations);
}

std::optional<NodeBase> NodePictures::Take(const std::string& node) {
  auto it = pictures_.find(node);
  if (it == pictures_.end()) return std::nullopt;
  NodeBase base = std::move(it->second);
  pictures_.erase(it);  // used once: after our write it is stale
  return base;
}

}  // namespace faultline
