// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/node_reports.h"

#include <algorithm>

namespace faultline {

TaintedNodeReport ReportFor(const NodeInfo& n, const NodeReportKeys& keys) {
  TaintedNodeReport report;
  report.node = n.name;
  report.tainted = std::any_of(n.taints.begin(), n.taints.end(),
                               [&](const NodeTaint& t) { return t.SameAs(keys.taint); });
  if (auto a = n.annotations.find(keys.annotation_key); a != n.annotations.end()) {
    if (auto rs = DecodeReasons(a->second); rs) report.reasons = std::move(*rs);
  }
  report.boot_id = n.boot_id;
  if (auto h = n.annotations.find(keys.history_annotation_key); h != n.annotations.end()) {
    report.history = DecodeRecoveries(h->second);
  }
  if (auto l = n.labels.find(std::string(kNeedsInspectionLabel)); l != n.labels.end()) {
    report.needs_inspection = l->second == "true";
  }
  if (report.reasons.empty() && report.tainted) {
    Reason adopted;
    adopted.rule = std::string(Reason::kAdoptedRule);
    adopted.summary = "taint without faultline's reasons annotation";
    report.reasons.push_back(adopted);
  }
  if (!report.reasons.empty()) {
    report.since = report.reasons.front().first_seen;
    for (const Reason& r : report.reasons) report.since = std::min(report.since, r.first_seen);
  }
  return report;
}

Result<std::vector<TaintedNodeReport>> ListTainted(NodeApi& api, const NodeReportKeys& keys) {
  Result<std::vector<NodeInfo>> nodes = api.ListNodes("");
  if (!nodes) return nodes.error();
  std::vector<TaintedNodeReport> out;
  for (const NodeInfo& n : *nodes) {
    TaintedNodeReport report = ReportFor(n, keys);
    if (report.tainted) out.push_back(std::move(report));
  }
  return out;
}

Result<TaintedNodeReport> ExplainNode(NodeApi& api, const NodeReportKeys& keys,
                                      const std::string& node) {
  Result<NodeInfo> info = api.GetNode(node);
  if (!info) return info.error();
  return ReportFor(*info, keys);
}

}  // namespace faultline
