// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "tainter/core/node_model.h"
#include "tainter/core/reasons.h"
#include "tainter/core/recovery.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// What `faultline-tainter nodes` and `explain` print for one node, as the
// API server has it (not any process's memory).
struct TaintedNodeReport {
  std::string node;
  std::chrono::system_clock::time_point since;  // the earliest first_seen
  std::vector<Reason> reasons;
  bool tainted = true;  // carries faultline's taint (explain also reports nodes that do not)
  // Return to service: the node's boot id (status.nodeInfo.bootID), its
  // recovery history (faults lifted, reboots, check rounds, escalations) and
  // whether it carries the needs-inspection label.
  std::string boot_id;
  std::vector<Recovery> history;
  bool needs_inspection = false;
};

// Which taint and annotation are faultline's (the config's taint.key and
// .effect, `annotation`).
struct NodeReportKeys {
  NodeTaint taint;
  std::string annotation_key;
  std::string history_annotation_key = "faultline.dev/recoveries";
};

// The report of `node` as read: whether it carries faultline's taint, and
// the reasons its annotation holds (one "adopted" reason for a taint
// without the annotation). Pure.
TaintedNodeReport ReportFor(const NodeInfo& node, const NodeReportKeys& keys);

// `nodes`: every node carrying faultline's taint (one list of all nodes).
Result<std::vector<TaintedNodeReport>> ListTainted(NodeApi& api, const NodeReportKeys& keys);
// `explain NODE`: one GET. kNotFound: no such node.
Result<TaintedNodeReport> ExplainNode(NodeApi& api, const NodeReportKeys& keys,
                                      const std::string& node);

}  // namespace faultline
