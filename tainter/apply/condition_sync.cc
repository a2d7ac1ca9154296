// SPDX-License-Identifier: Apache-2.0
// The applier's node conditions: faultline's NodeConditions on nodes/status
// kept in line with the active reasons (what they say:
// tainter/core/conditions.h).
#include <set>

#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/core/conditions.h"

namespace faultline {

Status Tainter::SyncConditions(const std::string& node, const NodeInfo* seen) {
  if (!options_.node_conditions || !conditions_supported_) return OkStatus();
  std::vector<Reason> active = policy_.ActiveReasons(node);
  std::set<std::string>& owned = condition_types_[node];
  for (std::string_view t : kFaultConditionTypes) owned.emplace(t);
  for (const Reason& r : active) {
    if (!r.condition.empty()) owned.insert(r.condition);
  }
  NodeInfo fetched;
  if (!seen) {
    Result<NodeInfo> live = api_.GetNode(node);
    FL_RETURN_IF_ERROR(live.status());
    fetched = std::move(*live);
    seen = &fetched;
  }
  std::vector<NodeCondition> updates =
      ConditionUpdates(seen->conditions, active, owned, clock_.Now(), policy_.Waits(node));
  if (updates.empty()) return OkStatus();  // already so: no heartbeat-only write
  Status s = api_.PatchNodeConditions(node, updates);
  if (s.code() == StatusCode::kFailedPrecondition) {
    conditions_supported_ = false;  // a NodeApi without conditions (an in-memory fake)
    return OkStatus();
  }
  FL_RETURN_IF_ERROR(s);
  for (const NodeCondition& c : updates) {
    m_.ConditionWrites(c.type, c.status).Inc();
    LogInfo("tainter", options_.dry_run ? "would set node condition" : "set node condition",
            {{"node", node}, {"type", c.type}, {"status", c.status}, {"reason", c.reason}});
  }
  return OkStatus();
}

void Tainter::ReconcileConditions(const NodeInfo& node) {
  if (!options_.node_conditions || !conditions_supported_ || !policy_.Knows(node.name)) return;
  if (owns_ && !owns_(node.name)) return;  // the owner of its partition writes it
  // The node as seen, against the reasons now held: a taint lifted with
  // kubectl (not `untaint`) leaves no reason, so the condition goes False;
  // a condition someone else changed is put back. No write when they agree.
  std::set<std::string>& owned = condition_types_[node.name];
  for (std::string_view t : kFaultConditionTypes) owned.emplace(t);
  std::vector<NodeCondition> updates =
      ConditionUpdates(node.conditions, policy_.ActiveReasons(node.name), owned, clock_.Now(),
                       policy_.Waits(node.name));
  if (updates.empty()) return;
  // A GET, not `node`: a watch may deliver the node as of our patch of it,
  // before our write to its status (whose own event follows), and writing
  // from that picture would repeat the write.
  if (Status s = SyncConditions(node.name); !s.ok()) {
    LogWarning("tainter", "could not set node conditions",
               {{"node", node.name}, {"error", s.message()}});
  }
}

}  // namespace faultline
