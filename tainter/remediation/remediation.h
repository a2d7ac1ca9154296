// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/core/reasons.h"
#include "tainter/kube/eviction.h"
#include "tainter/kube/node_api.h"
#include "tainter/remediation/drain.h"
#include "tainter/remediation/remediation_metrics.h"

namespace faultline {

// What faultline does to a node besides its taint, strongest last.
//   taint   the taint only (taint.effect: NoSchedule, or NoExecute)
//   cordon  also spec.unschedulable: true, recorded so faultline uncordons only what it cordoned
//   drain   cordon, then evict the node's pods through the Eviction API
enum class RemediationAction : std::uint8_t { kTaint, kCordon, kDrain };
std::string_view RemediationActionName(RemediationAction a);
std::optional<RemediationAction> ParseRemediationAction(std::string_view text);

// The `remediation:` section of the tainter's config. The action is the
// operator's choice per rule or per category, not the rule pack's: packs
// are shared with every agent and written for detection, while whether a
// fault may evict workloads is a property of the cluster (its PDBs, its
// jobs' tolerance); and an event's claims travel unauthenticated through
// Kafka, so nothing in one may ask for a drain.
struct RemediationOptions {
  RemediationAction action = RemediationAction::kTaint;        // every rule not named below
  std::map<std::string, RemediationAction> by_category;        // "hardware" -> drain
  std::map<std::string, RemediationAction> by_rule;            // "nvidia.xid" -> cordon (wins)
  std::string cordoned_annotation = "faultline.dev/cordoned";  // present: faultline cordoned it
  std::string drain_annotation = "faultline.dev/drain";        // running | done
  std::optional<std::chrono::seconds> grace_period;            // nullopt: each pod's own
  int max_concurrent_drains = 1;                               // cluster-wide
  std::chrono::milliseconds retry_interval{5000};              // first wait after a 429
  std::chrono::milliseconds max_retry_interval{std::chrono::minutes(5)};
  std::chrono::milliseconds api_backoff{1000};                    // after a failed call
  std::chrono::seconds relist_interval{std::chrono::minutes(5)};  // re-read the cordon record
  // A drain still running this long after it started (a pod that never
  // leaves: no kubelet confirms its end, a finalizer nobody removes, a
  // budget that stays shut) is given up: the node needs a person, and its
  // slot goes to the next drain.
  std::chrono::seconds drain_deadline{std::chrono::minutes(30)};
  bool dry_run = false;

  // The action for one rule: by_rule, else by_category, else action.
  RemediationAction For(const std::string& rule, const std::string& category) const;
  // Whether anything beyond the taint is configured at all.
  bool Active() const;
};

// Cordon, drain and uncordon, driven by the tainter's state: each Tick()
// looks at the nodes faultline taints (the Policy's picture, which follows
// the node watch) and at the nodes faultline cordoned, and moves each one
// step towards what its active reasons ask:
//
//  - a tainted node whose strongest reason asks for cordon or drain is
//    cordoned with one merge patch of spec.unschedulable and the
//    `cordoned_annotation`, at the resourceVersion read (a 409 re-reads at
//    the next tick). A node already unschedulable is left as it is and NOT
//    recorded: someone else cordoned it, so faultline will not uncordon it.
//  - drain: once cordoned, and when fewer than max_concurrent_drains nodes
//    of the cluster carry `drain_annotation: running` (the count comes from
//    the node list, so every replica sees the others' drains), the node is
//    marked running and its pods evicted (Eviction API, so PDBs hold) except
//    DaemonSet, mirror and finished pods. A 429 from a budget waits
//    retry_interval, doubling up to max_retry_interval, per pod. When no pod
//    is left to evict (those evicted are gone), the mark becomes `done`.
//    A drain still running drain_deadline after it started (a pod that
//    never leaves; the start is recorded on the node, so a restart does not
//    reset it) is given up: the mark becomes `timed-out`, which frees
//    its slot, and the node is reported as needing a person (a warning, a
//    Warning Event FaultlineDrainTimedOut, drains_total{state="timed_out"},
//    and OnNeedsPerson, which the stack passes to the node's condition).
//    It stays cordoned and is not drained again while its fault holds.
//  - a node faultline no longer taints (expiry, `untaint`, by hand) that
//    carries the cordoned annotation is uncordoned; the drain mark is
//    removed either way. A node cordoned by someone else stays cordoned.
//
// Only the nodes `owns` says this replica decides for are acted on (the
// Kafka partition owner, as for expiry). Drains happen only on nodes the
// safety valve let faultline taint, so valve.max_fraction bounds them too.
//
// Thread-safety: none; the daemon's main loop calls Tick().
class Remediator {
 public:
  // What the Remediator reads of the tainter each tick.
  struct View {
    std::function<bool()> ready;  // the tainter has read the nodes (adopted)
    std::function<std::vector<std::string>()> tainted_nodes;
    std::function<std::vector<Reason>(const std::string& node)> reasons;
    std::function<bool(const std::string& node)> owns;             // empty: every node
    std::function<std::string(const std::string& rule)> category;  // the rule's category
  };

  Remediator(RemediationOptions options, View view, EvictionApi& evictions, NodeApi& nodes,
             EventApi& events, MetricsRegistry& metrics, const Clock& clock);

  void Tick();

  // Called (on the Tick() thread) when a node's drain ran past
  // drain_deadline, with a sentence saying what it waited for; the stack
  // passes it to the applier so that the node's condition says so.
  using NeedsPersonFn = std::function<void(const std::string& node, const std::string& why)>;
  void OnNeedsPerson(NeedsPersonFn fn) { needs_person_ = std::move(fn); }

  // The action the node's active reasons ask for (the strongest).
  RemediationAction Wanted(const std::string& node) const;
  // For tests and `explain`: what the Remediator believes of a node.
  bool Cordoned(const std::string& node) const;  // faultline's own cordon
  bool Drained(const std::string& node) const;
  int active_drains() const;

 private:
  struct NodeState {
    RemediationAction want = RemediationAction::kTaint;
    bool cordon_checked = false;  // cordoned by us, or found cordoned by someone else
    bool ours = false;            // faultline's cordon (the annotation is on the node)
    bool draining = false;        // holds a drain slot (annotation `running`)
    bool drained = false;
    bool timed_out = false;  // ran past drain_deadline: left to a person (mark `timed-out`)
    std::chrono::steady_clock::time_point drain_started{};  // from the node's record (a restart)
    std::string waiting_for;  // the pods the last step still waited for, for the report
    int failures = 0;
    std::chrono::steady_clock::time_point next_try{};
    DrainProgress pods;
    explicit NodeState(const RemediationOptions& o)
        : pods(o.retry_interval, o.max_retry_interval) {}
  };

  Status Relist();
  Status Cordon(const std::string& node, NodeState& s);
  Status StartDrain(const std::string& node, NodeState& s, bool* started);
  // The reason for a drain went away while it ran (the node is still
  // cordoned for another): its slot and mark are given back.
  Status StopDrain(const std::string& node, NodeState& s);
  // Sets (or, with nullopt, removes) the node's drain mark: a merge patch
  // carrying the resourceVersion just read, so a concurrent write is a 409.
  // A `running` mark also records when the drain started (the annotation
  // drain_annotation + "-started", RFC 3339); any other mark removes it.
  Status SetDrainMark(const std::string& node, std::optional<std::string> mark);
  std::string StartedAnnotation() const;
  // When a drain found running on the node started, on this process's
  // steady clock: from the node's record, or now when it has none.
  std::chrono::steady_clock::time_point DrainStartedAt(const NodeScheduling& node) const;
  Status DrainStep(const std::string& node, NodeState& s);
  // The drain ran past drain_deadline: its mark becomes `timed-out` (the
  // slot is free, every replica sees it), and the node is reported as
  // needing a person: a warning, a Warning Event, a metric, needs_person_.
  Status TimeOut(const std::string& node, NodeState& s);
  Status Lift(const std::string& node);
  void Failed(const std::string& node, NodeState& s, const Status& why);
  void NodeEventNow(const std::string& node, const std::string& reason, const std::string& msg,
                    const std::string& type = "Normal");

  RemediationOptions options_;
  View view_;
  EvictionApi& evictions_;
  NodeApi& nodes_api_;
  EventApi& events_api_;
  RemediationMetrics metrics_;
  const Clock& clock_;
  std::map<std::string, NodeState> nodes_;
  // Nodes seen carrying faultline's cordon or drain mark (from the list),
  // whether or not this process put it there: lifted when no longer tainted.
  std::set<std::string> marked_;
  bool listed_ = false;
  std::chrono::steady_clock::time_point next_list_{};
  std::map<std::string, std::chrono::steady_clock::time_point> lift_retry_;
  // Other nodes' running drains, from one node list: read at most once per
  // retry_interval while drains wait for a slot (a list of every node is
  // the costly call here), and counted up as this replica starts drains.
  std::optional<int> running_elsewhere_;
  std::chrono::steady_clock::time_point running_read_at_{};
  NeedsPersonFn needs_person_;
};

}  // namespace faultline
