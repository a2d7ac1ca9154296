// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/metered_node_api.h"

#include <string>

namespace faultline {

void MeteredNodeApi::Meter(std::string_view op, const Status& s,
                           std::chrono::steady_clock::time_point start) {
  const std::chrono::duration<double> took = clock_.MonotonicNow() - start;
  metrics_.ApiLatency(std::string(op)).Observe(took.count());
  if (!s.ok()) metrics_.ApiErrors(std::string(op), std::string(StatusCodeName(s.code()))).Inc();
  reachable_ =
      s.ok() || (s.code() != StatusCode::kUnavailable && s.code() != StatusCode::kUnauthenticated &&
                 s.code() != StatusCode::kDeadlineExceeded);
}

Result<NodeInfo> MeteredNodeApi::GetNode(std::string_view name) {
  const auto start = clock_.MonotonicNow();
  Result<NodeInfo> node = inner_.nodes.GetNode(name);
  Meter("get", node.status(), start);
  return node;
}

Result<std::vector<NodeInfo>> MeteredNodeApi::ListNodes(std::string_view label_selector) {
  const auto start = clock_.MonotonicNow();
  Result<std::vector<NodeInfo>> nodes = inner_.nodes.ListNodes(label_selector);
  Meter("list", nodes.status(), start);
  return nodes;
}

Status MeteredNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  const auto start = clock_.MonotonicNow();
  Status s = inner_.nodes.UpdateNode(name, change);
  Meter("update", s, start);
  return s;
}

Status MeteredNodeApi::CreateEvent(const NodeEvent& event) {
  const auto start = clock_.MonotonicNow();
  Status s = inner_.events.CreateEvent(event);
  Meter("event", s, start);
  return s;
}

Status MeteredNodeApi::PatchNodeConditions(std::string_view name,
                                           const std::vector<NodeCondition>& conditions) {
  const auto start = clock_.MonotonicNow();
  Status s = inner_.nodes.PatchNodeConditions(name, conditions);
  Meter("conditions", s, start);
  return s;
}

Result<PodListing> MeteredNodeApi::ListPodsAt(std::string_view field_selector) {
  if (inner_.pods == nullptr) return InternalError("no PodApi behind the metered API (a bug)");
  const auto start = clock_.MonotonicNow();
  Result<PodListing> pods = inner_.pods->ListPodsAt(field_selector);
  Meter("list_pods", pods.status(), start);
  return pods;
}

Result<SharedRecord> MeteredNodeApi::GetValveRecord() {
  if (inner_.valve == nullptr) {
    return InternalError("no valve record behind the metered API (a bug)");
  }
  const auto start = clock_.MonotonicNow();
  Result<SharedRecord> record = inner_.valve->GetValveRecord();
  Meter("valve", record.status(), start);
  return record;
}

Status MeteredNodeApi::PutValveRecord(const std::string& value,
                                      const std::string& expected_version) {
  if (inner_.valve == nullptr) {
    return InternalError("no valve record behind the metered API (a bug)");
  }
  const auto start = clock_.MonotonicNow();
  Status s = inner_.valve->PutValveRecord(value, expected_version);
  if (s.code() != StatusCode::kAborted && s.code() != StatusCode::kAlreadyExists) {
    Meter("valve", s, start);
  }
  return s;
}

}  // namespace faultline
