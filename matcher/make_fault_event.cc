// SPDX-License-Identifier: Apache-2.0
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

std::string PeerOf(const RuleMatch& match) {
  if (match.rule == nullptr || match.rule->peer.empty()) return {};
  auto it = match.fields.find(match.rule->peer);
  return it == match.fields.end() ? std::string() : it->second;
}

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
