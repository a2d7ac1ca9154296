// SPDX-License-Identifier: Apache-2.0
// The applier's node conditions: faultline's NodeConditions on nodes/status
// kept in line with the active reasons (what they say:
// tainter/core/conditions.h).
#include <algorithm>
#include <set>

#include "base/fault_event.h"
#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/core/conditions.h"

namespace faultline {

Status Tainter::SyncConditions(const std::string& node, const NodeInfo* seen) {
  if (!options_.node_conditions) return OkStatus();
  std::vector<Reason> active = policy_.ActiveReasons(node);
  std::set<std::string>& owned = condition_types_[node];
  for (std::string_view t : kFaultConditionTypes) owned.emplace(t);
  for (const Reason& r : active) {
    if (!r.condition.empty()) owned.insert(r.condition);
  }
  NodeInfo fetched;
  if (!seen) {
    Result<NodeInfo> live = api_.nodes.GetNode(node);
    FL_RETURN_IF_ERROR(live.status());
    fetched = std::move(*live);
    seen = &fetched;
  }
  std::vector<NodeCondition> updates = ConditionsToWrite(node, seen->conditions, active, owned);
  if (updates.empty()) return OkStatus();  // already so: no heartbeat-only write
  pictures_.Drop(node);  // the status write moves the node past the watch's picture
  FL_RETURN_IF_ERROR(api_.nodes.PatchNodeConditions(node, updates));
  for (const NodeCondition& c : updates) {
    m_.ConditionWrites(c.type, c.status).Inc();
    LogInfo("tainter", options_.dry_run ? "would set node condition" : "set node condition",
            {{"node", node}, {"type", c.type}, {"status", c.status}, {"reason", c.reason}});
  }
  return OkStatus();
}

void Tainter::ReconcileConditions(const NodeInfo& node) {
  if (!options_.node_conditions || !policy_.Knows(node.name)) return;
  if (owns_ && !owns_(node.name)) return;  // the owner of its partition writes it
  // The node as seen, against the reasons now held: a taint lifted with
  // kubectl (not `untaint`) leaves no reason, so the condition goes False;
  // a condition someone else changed is put back. No write when they agree.
  std::set<std::string>& owned = condition_types_[node.name];
  for (std::string_view t : kFaultConditionTypes) owned.emplace(t);
  std::vector<NodeCondition> updates =
      ConditionsToWrite(node.name, node.conditions, policy_.ActiveReasons(node.name), owned);
  if (updates.empty()) return;
  // A GET, not `node`: a watch may deliver the node as of our patch of it,
  // before our write to its status (whose own event follows), and writing
  // from that picture would repeat the write.
  if (Status s = SyncConditions(node.name); !s.ok()) {
    LogWarning("tainter", "could not set node conditions",
               {{"node", node.name}, {"error", s.message()}});
  }
}

std::vector<NodeCondition> Tainter::ConditionsToWrite(const std::string& node,
                                                      const std::vector<NodeCondition>& live,
                                                      const std::vector<Reason>& active,
                                                      const std::set<std::string>& owned) {
  const auto now = clock_.Now();
  const std::map<std::string, Waiting> waits = policy_.Waits(node);
  auto note = needs_person_.find(node);
  if (note != needs_person_.end() && active.empty()) {  // lifted: the note goes with the fault
    needs_person_.erase(note);
    note = needs_person_.end();
  }
  if (note == needs_person_.end()) return ConditionUpdates(live, active, owned, now, waits);
  // The True conditions as ConditionUpdates would write them from scratch,
  // saying that the node needs a person; each compared with the live one
  // as ConditionUpdates does (no write when it already says so).
  std::vector<NodeCondition> out;
  for (NodeCondition c : ConditionUpdates({}, active, owned, now, waits)) {
    c.reason = std::string(kNeedsPersonReason);
    c.message = TruncateUtf8(note->second + ". " + c.message, 1024);
    auto cur = std::find_if(live.begin(), live.end(),
                            [&](const NodeCondition& l) { return l.type == c.type; });
    if (cur != live.end() && cur->status == c.status && cur->reason == c.reason &&
        cur->message == c.message) {
      continue;
    }
    if (cur != live.end() && cur->status == c.status && !cur->last_transition_time.empty()) {
      c.last_transition_time = cur->last_transition_time;
    }
    out.push_back(std::move(c));
  }
  for (NodeCondition& c : ConditionUpdates(live, active, owned, now, waits)) {
    if (c.status != "True") out.push_back(std::move(c));  // lifted types, as ever
  }
  return out;
}

void Tainter::MarkNeedsPerson(const std::string& node, std::string why) {
  if (policy_.ActiveReasons(node).empty()) return;  // nothing held: nothing to say it on
  needs_person_[node] = std::move(why);
  if (Status s = SyncConditions(node); !s.ok()) {
    LogWarning("tainter", "could not set node conditions",
               {{"node", node}, {"error", s.message()}});
  }
}

}  // namespace faultline
