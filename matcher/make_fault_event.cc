// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "matcher/rule_set.h"

namespace faultline {

FaultEvent MakeFaultEvent(const RuleMatch& match, const LogRecord& record, std::string_view node,
                          std::string_view boot_id,
                          std::chrono::system_clock::time_point detected_time) {
  FaultEvent e;
  FillFaultEvent(match, record, node, boot_id, detected_time, e);
  return e;
}

void FillFaultEvent(const RuleMatch& match, const LogRecord& record, std::string_view node,
                    std::string_view boot_id, std::chrono::system_clock::time_point detected_time,
                    FaultEvent& e) {
  // Assigned, not constructed: a reused event keeps its strings' buffers
  // and its maps' nodes. Every member is set here or in ApplyMatchOutcome.
  e.node.assign(node);
  e.boot_id.assign(boot_id);
  e.source = record.source;
  e.origin = record.origin;
  if (match.rule) {
    e.rule = match.rule->id;
  } else {
    e.rule.clear();
  }
  AssignEventId(e.id, node, record.source, record.cursor, e.rule);
  e.fields = match.fields;
  e.message.assign(TruncateUtf8View(record.text, FaultEvent::kMaxMessageBytes));
  e.log_time = record.time;
  e.detected_time = detected_time;
  e.labels = record.labels;
  e.suppressed = 0;
  e.evidence.clear();
  ApplyMatchOutcome(match, e);
}

namespace {

// PeerOf as a view into match.fields.
std::string_view PeerView(const RuleMatch& match) {
  if (match.rule == nullptr || match.rule->peer.empty()) return {};
  auto it = match.fields.find(match.rule->peer);
  return it == match.fields.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace

FaultEventView ViewFaultEvent(const RuleMatch& match, const RecordView& record,
                              std::string_view node, std::string_view boot_id,
                              std::chrono::system_clock::time_point detected_time,
                              EventViewBuffers& buffers) {
  // Member for member what FillFaultEvent and ApplyMatchOutcome assign
  // (the scan's JSON is pinned by a test, and it is the same writer).
  FaultEventView e;
  e.node = node;
  e.boot_id = boot_id;
  e.source = record.source;
  e.origin = record.origin;
  const Rule* rule = match.rule;
  e.rule = rule ? std::string_view(rule->id) : std::string_view();
  const std::size_t shared = std::min(record.cursor_shared, record.cursor.size());
  buffers.ids.Write(buffers.id, node, record.source, record.cursor.substr(0, shared),
                    record.cursor.substr(shared), e.rule);
  e.id = std::string_view(buffers.id.data(), buffers.id.size());
  buffers.fields.clear();
  for (const auto& [name, value] : match.fields) buffers.fields.emplace_back(name, value);
  e.fields = buffers.fields;
  e.message = TruncateUtf8View(record.text, FaultEvent::kMaxMessageBytes);
  e.log_time = record.time;
  e.detected_time = detected_time;
  e.labels = record.labels;
  e.pack = rule ? std::string_view(rule->pack) : std::string_view();
  e.category = match.category;
  e.severity = match.severity;
  e.action = match.action;
  e.summary = match.summary;
  e.threshold = match.threshold ? &*match.threshold : nullptr;
  e.expire = match.expire;
  e.condition = match.condition;
  e.peer = PeerView(match);
  e.recover = match.recover;
  if (rule) {
    e.probation = rule->probation;
    e.clears = rule->clears;
  }
  return e;
}

std::string PeerOf(const RuleMatch& match) { return std::string(PeerView(match)); }

void ApplyMatchOutcome(const RuleMatch& match, FaultEvent& e) {
  e.pack = match.rule ? match.rule->pack : std::string();
  e.category = match.category;
  e.severity = match.severity;
  e.action = match.action;
  e.summary = match.summary;
  e.threshold = match.threshold;
  e.expire = match.expire;
  e.condition = match.condition;
  e.peer = PeerOf(match);
  e.recover = match.recover;
  e.probation = match.rule ? match.rule->probation : std::nullopt;
  e.clears = match.rule ? match.rule->clears : std::vector<std::string>();
}

}  // namespace faultline
