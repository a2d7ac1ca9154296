// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tainter/core/node_model.h"

namespace faultline {

// Each watched node as the watch last delivered it, kept to what a write of
// faultline's keys is built from (NodeBase: the annotations and labels our
// writes name, whether the node has those maps at all, its taints and its
// conditions): a new taint is written from it without a GET
// (Tainter::WriteReasons), the patch's test of the resourceVersion refusing
// it if the node moved since. A picture is taken by the one write that uses
// it and dropped by any other write of ours to the node (it is stale then);
// the watch brings the next. About 0.5 KiB a node: 5 MiB at 10,000 nodes.
//
// Thread-safety: none; the applier's thread only.
class NodePictures {
 public:
  NodePictures(std::vector<std::string> annotation_keys, std::vector<std::string> label_keys)
      : annotation_keys_(std::move(annotation_keys)), label_keys_(std::move(label_keys)) {}

  void Keep(const NodeInfo& node);
  // The node's picture, removed: nullopt when the watch has not shown it
  // since our last write to it.
  std::optional<NodeBase> Take(const std::string& node);
  void Drop(const std::string& node) { pictures_.erase(node); }

 private:
  std::vector<std::string> annotation_keys_;
  std::vector<std::string> label_keys_;
  std::map<std::string, NodeBase> pictures_;
};

}  // namespace faultline
