// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/fault_event.h"
#include "base/token_bucket.h"
#include "tainter/core/reasons.h"
#include "tainter/core/recovery.h"
#include "tainter/core/valve.h"

namespace faultline {

// What the policy decided about one event, or about a node at a Tick.
enum class DecisionOutcome : std::uint8_t {
  kIgnored,         // action: ignore
  kDuplicate,       // an event id already decided
  kUnmanaged,       // the node does not match the node selector (or is unknown)
  kBelowThreshold,  // counted in its window; not enough yet
  kStale,           // its quiet period (`expire`) was over before it arrived
  kRecordEvent,     // a Warning Event on the node, no taint (action: event; or opted out)
  kTaint,           // add faultline's taint and write the reasons
  kUpdateReasons,   // already tainted: write the refreshed reasons, no new taint
  kRefusedByValve,  // would taint, but the safety valve is shut
  kLift,            // no active reason is left: remove faultline's taint
};
std::string_view DecisionOutcomeName(DecisionOutcome outcome);  // "taint", "refused_by_valve", ...

// An Event to record on the node once the plan's write has landed.
struct PlannedEvent {
  std::string type;     // Warning | Normal
  std::string reason;   // FaultlineTainted, FaultlineFault, FaultlineValveShut, FaultlineUntainted
  std::string message;  // bounded (EventMessage)
};

// What applying a decision means, complete: at most one node write, then the
// Events, in order. The applier (Tainter) queues and executes it; it does not
// ask the policy anything while doing so.
struct NodePlan {
  enum class Write : std::uint8_t {
    kNone,
    kTaint,    // add faultline's taint and write `reasons` to the annotation
    kReasons,  // write `reasons` to the annotation (with the taint they justify)
    kLift,     // remove faultline's taint and the annotation
  };
  Write write = Write::kNone;
  std::vector<Reason> reasons;  // kTaint, kReasons: every active reason of the node
  std::vector<PlannedEvent> events;
  // Non-empty: the node's recovery history (tainter/core/recovery.h), written
  // with the node write to the history annotation.
  std::vector<Recovery> history;
};

struct Decision {
  DecisionOutcome outcome = DecisionOutcome::kIgnored;
  std::string node;
  std::string event_id;
  // The reason the event stands for (rule, summary, message, times, expiry);
  // for kLift, empty.
  Reason reason;
  // The reason was just marked for hardware inspection (Event
  // FaultlineNeedsInspection, label kNeedsInspectionLabel).
  bool escalated = false;
  // Whether a Warning Event is due: new rules, refused taints and opted-out
  // nodes are rate-limited per node and rule (with its action and severity,
  // never the summary, which may quote a pod's output) so a flapping fault
  // cannot flood the API server with Events.
  bool emit_event = false;
  // kRefusedByValve: its Event was due but over refusal_events_per_minute:
  // counted, not recorded.
  bool event_suppressed = false;
  // Whether the node's reasons annotation must be written.
  bool write_reasons = false;
  bool opted_out = false;  // kRecordEvent for a taint that the opt-out label prevented
  std::string detail;      // kRefusedByValve: which limit; kBelowThreshold: "2/5 in 10m"
  NodePlan plan;           // what to write and record for it
  // The reasons this decision lifted (expiry, reboot, clear), each recorded
  // in the history and as a Normal Event FaultlineRecovered.
  std::vector<Recovery> recovered;
};

// Message text for a Node Event: "rule: summary: log line", bounded to 1 KiB.
std::string EventMessage(const Reason& reason, std::string_view prefix = {});

// The tainter's decisions, as pure logic: no I/O, the time from `clock`.
//
// Per event: dedupe by id (a bounded LRU set with a TTL), the rule's action
// (ignore / event / taint), its threshold (count within a window per node and
// key captures; an event weighs 1 + suppressed), then the safety valve. Per
// node: faultline's active reasons, each with an optional expiry that a
// repeat of the rule extends; the taint is lifted only once no reason is
// left. Reasons without `expire` stay until a person lifts the taint.
//
// The safety valve bounds how much of the fleet faultline takes out:
//  - at most max_fraction of MANAGED nodes carry faultline's taint at once,
//  - at most per_rule_max_fraction of them for any one rule,
//  - at most max_new_taints new taints within new_taint_window.
// Each fraction allows at least `min_allowed` nodes, so a 5-node cluster can
// still lose one. Past a limit, the would-be taint is refused (kRefusedByValve).
// Lifting never consults the valve.
//
// The node inventory (managed or not, opted out or not, tainted or not, with
// which reasons) is fed in by the caller: SetNode() from the API server's
// node list, Adopt() from the taint and annotation found on a node.
//
// Every decision carries its complete plan (NodePlan): the node write with
// the annotation's content and the Events to record. The policy assumes every
// decision it returns is applied (a planned write counts as persisted); a caller that
// finally gives up on one calls Adopt() or ForgetNode() with the truth.
//
// Thread-safety: none; one thread owns it.
class Policy {
 public:
  struct Options {
    double max_fraction = 0.10;
    double per_rule_max_fraction = 0.10;
    int min_allowed = 1;
    int max_new_taints = 5;
    std::chrono::seconds new_taint_window{std::chrono::minutes(10)};
    std::size_t dedupe_capacity = 100'000;
    std::chrono::seconds dedupe_ttl{std::chrono::hours(48)};
    // At most one Warning Event per node and rule within this interval for
    // refused taints, opted-out nodes and repeats.
    std::chrono::seconds event_interval{std::chrono::minutes(10)};
    // Fleet-wide, at most this many FaultlineValveShut Events a minute (a
    // burst of as many): in a storm the valve refuses thousands of nodes,
    // and an Event each would spend the client's rate limit, which the
    // taints and lifts need, on evidence nobody reads one by one. The rest
    // are counted (refusal_events_suppressed). 0: none.
    int refusal_events_per_minute = 10;
    // A repeat that only moves last_seen/expires_at is written to the
    // annotation at most this often (the in-memory state is always current).
    std::chrono::seconds persist_interval{std::chrono::minutes(1)};
    // Bounds on what an event says (it travels unauthenticated through
    // Kafka): a longer `expire` is cut to max_expire, a longer threshold
    // window to max_threshold_window.
    std::chrono::seconds max_expire{std::chrono::hours(24 * 30)};
    std::chrono::seconds max_threshold_window{std::chrono::hours(24 * 7)};
    // Threshold windows kept at once (keys include captures a pod controls);
    // past it the least recently hit window is forgotten.
    std::size_t max_windows = 100'000;
    // Rate-limit entries kept per node (rule, action, severity); past it the
    // oldest go.
    std::size_t max_event_keys_per_node = 256;
    // Return to service (tainter/core/recovery.h): a `recover: reboot` reason
    // without its own `probation` must stay quiet this long after the reboot;
    // a fault within recurring_window after a reboot or clear recovery of
    // its rule is recurring (lifted by hand only).
    std::chrono::seconds probation{std::chrono::minutes(10)};
    std::chrono::seconds recurring_window{std::chrono::hours(24)};
    // Verified lift: a `reboot` lift also needs a passing check round
    // (rule check.round) reported in the node's current boot. false: the
    // boot id and the probation suffice (nodes without an agent's checks).
    bool require_validation = true;
    // A fault that survived this many reboots is marked for hardware
    // inspection (never lifted automatically). 0: never.
    int inspection_after_reboots = 2;
  };

  Policy(Options options, const Clock& clock);
  // Not copyable: the dedupe index points into its own list.
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  // The node inventory. A node never seen through SetNode/Adopt is unknown:
  // Decide() answers kUnmanaged for it, so the caller should learn it first.
  void SetNode(const std::string& node, bool managed, bool opted_out);
  // Takes faultline's state as found on the node: whether it carries our
  // taint, and the reasons decoded from the annotation. A tainted node with
  // no reasons gets one "adopted" reason that never expires. An untainted
  // node's reasons are dropped (someone lifted the taint by hand).
  // Adopting never taints or lifts anything.
  void Adopt(const std::string& node, bool tainted, std::vector<Reason> reasons);
  void ForgetNode(const std::string& node);
  // The node's status.nodeInfo.bootID as last read or watched; a change
  // starts the probation of its `recover: reboot` reasons (at the time this
  // process saw it: a restart of the tainter restarts probation).
  void SetBootId(const std::string& node, const std::string& boot_id);
  // The node's recovery history as found on it (merged with memory), and
  // lifts made elsewhere (a by-hand untaint) added to it.
  void SetHistory(const std::string& node, const std::vector<Recovery>& history);
  void NoteRecoveries(const std::string& node, const std::vector<Recovery>& lifted);
  std::vector<Recovery> History(const std::string& node) const;
  // What each active reason of `node` waits for (by rule), from its state,
  // the node's boot id and the validations in its history.
  std::map<std::string, Waiting> Waits(const std::string& node) const;
  bool Knows(const std::string& node) const { return nodes_.count(node) != 0; }

  // Decides one live event and updates the state as if the decision holds.
  Decision Decide(const FaultEvent& event);
  // Decides an event again after the node was found changed before its
  // plan was applied (e.g. the taint lifted by hand): no dedupe, no second
  // count in its threshold window; the valve is asked again.
  Decision Redecide(const FaultEvent& event);
  // The same decisions written into `d`, every member overwritten, its
  // strings' and lists' buffers reused: a caller deciding one event after
  // another (the Tainter) keeps one Decision instead of allocating the
  // reason's summary, message, ids and evidence lines for every event and
  // freeing them after.
  void Decide(const FaultEvent& event, Decision& d);
  void Redecide(const FaultEvent& event, Decision& d);

  // Feeds an event already decided before (re-read from Kafka after a
  // restart or a rebalance): it fills the threshold window and the dedupe
  // set, and never produces a decision.
  void Replay(const FaultEvent& event);

  // The fleet said no (the shared valve record, tainter.h): turns a kTaint
  // decision back into kRefusedByValve with `detail`, as if the valve had
  // refused it here, and undoes its state.
  Decision RefuseTaint(const Decision& taint, const FaultEvent& event, std::string detail);
  // How many managed nodes max_fraction allows (at least min_allowed).
  int FleetLimit() const { return valve_.FleetLimit(managed_nodes()); }
  // The valve's arithmetic, texts and shared-record codec (tainter/core/valve.h).
  const FleetValve& valve() const { return valve_; }
  bool IsManaged(const std::string& node) const;

  // Lapses reasons whose expiry has passed. Returns kLift for tainted nodes
  // left without any reason and kUpdateReasons (write_reasons) for nodes
  // that still have some; also trims old windows and dedupe entries.
  // `decides`, when given, says which nodes this replica decides for (the
  // owner of the node's Kafka partition); the others' reasons are left to
  // their owner.
  std::vector<Decision> Expire(const std::function<bool(const std::string&)>& decides = {});

  // A person lifted the taint (`faultline-tainter untaint`): drops the
  // node's reasons; returns whether faultline had it tainted.
  bool Untaint(const std::string& node);

  // State for the applier, `nodes` and metrics.
  bool IsTainted(const std::string& node) const;
  std::vector<Reason> ActiveReasons(const std::string& node) const;
  // Reasons were last written at this time (write_reasons throttling); a
  // planned write marks it already.
  void MarkPersisted(const std::string& node);
  int managed_nodes() const;
  int tainted_nodes() const;  // managed nodes that carry faultline's taint
  std::vector<std::string> TaintedNodes() const;
  std::vector<std::string> Nodes() const;  // every node the policy knows
  std::size_t window_count() const { return windows_.size(); }
  std::size_t dedupe_size() const { return dedupe_index_.size(); }
  const Options& options() const { return options_; }

 private:
  struct NodeState {
    bool managed = false;
    bool opted_out = false;
    bool tainted = false;
    std::map<std::string, Reason> reasons;  // by rule
    std::chrono::steady_clock::time_point persisted_at{};
    std::map<std::string, std::chrono::steady_clock::time_point> last_event;  // by EventKey
    std::string boot_id;                                 // status.nodeInfo.bootID
    std::chrono::system_clock::time_point boot_seen_at;  // when boot_id was first seen
    std::vector<Recovery> history;                       // newest last, bounded
    bool history_dirty = false;  // holds an entry not yet written (a reboot seen)
  };
  struct Window {
    std::list<std::string>::iterator lru;  // in window_lru_
    std::chrono::seconds span{0};
    std::deque<std::pair<std::chrono::system_clock::time_point, std::uint64_t>> hits;
    // When the newest hit arrived, on this process's monotonic clock. Hits
    // carry the agent's detection time; forgetting a window by them would
    // drop every window of an agent whose clock is more than `span` behind
    // between two of its events, and its threshold would never be reached.
    std::chrono::steady_clock::time_point last_arrival{};
  };

  void DecideEvent(const FaultEvent& event, bool fresh, Decision& d);
  // A `clear:` rule's match: lifts the named reasons (tainter/core/recovery.h).
  // `d`, DecideEvent's, is completed in place (as DecideRound's): every
  // return of DecideEvent is then the one Decision, built where the caller
  // receives it (no move of a whole decision per event).
  void DecideClear(const FaultEvent& event, NodeState& state, Decision& d);
  // The agent's check-round summary (rule check.round): the validation of
  // its boot, recorded in the history (tainter/core/recovery.h).
  void DecideRound(const FaultEvent& event, NodeState& state, Decision& d);
  // Records a validation verdict for `boot_id`; true when it is news (the
  // first for that boot, or a different verdict).
  bool NoteValidation(NodeState& state, const std::string& boot_id, bool passed, std::string detail,
                      std::chrono::system_clock::time_point at);
  // Whether `state` holds a reboot reason waiting in a boot after its fault's.
  static bool AwaitsValidation(const NodeState& state, const std::string& boot_id);
  // Counts a reboot the reason survived; marks it for inspection at the
  // limit. true: it was just escalated.
  bool SurvivedReboot(Reason& r);
  // A repeat of a held reason merged into it (policy.cc says how).
  bool MergeRepeat(Reason& r, const Reason& seen, std::chrono::system_clock::time_point at,
                   bool& escalated);
  // true: first time this id is seen (and remembers it).
  bool Remember(const std::string& id);
  // Adds the event to its window; returns the weight within the window.
  std::uint64_t CountInWindow(const FaultEvent& event, std::chrono::system_clock::time_point at);
  std::chrono::system_clock::time_point EventTime(const FaultEvent& event) const;
  // The reason `event` stands for, written into `r` (its buffers reused).
  void AssignReason(const FaultEvent& event, std::chrono::system_clock::time_point at,
                    Reason& r) const;
  // Empty when a taint is allowed, else which limit refuses it.
  std::string ValveRefusal(const std::string& rule);
  static std::string EventKey(const FaultEvent& event);
  // A refusal's Event: due per node and rule (EventDue) and within the
  // fleet-wide refusal_events_per_minute.
  void RefusalEvent(Decision& d, NodeState& state, const std::string& rule);
  bool EventDue(NodeState& state, const std::string& rule);
  // Fills d.plan from the outcome and the node's state after the decision.
  void Plan(Decision& d, NodeState& state);

  Options options_;
  const Clock& clock_;
  std::map<std::string, NodeState> nodes_;
  std::unordered_map<std::string, Window> windows_;
  std::list<std::string> window_lru_;  // most recently hit first
  // The dedupe set: ids most recently seen first, with when each was first
  // seen. The index's keys view the ids held by the list's nodes (which
  // never move), so each id is stored and copied once, not twice.
  std::list<std::pair<std::string, std::chrono::steady_clock::time_point>> dedupe_lru_;
  std::unordered_map<std::string_view, decltype(dedupe_lru_)::iterator> dedupe_index_;
  FleetValve valve_;            // the limits, and this process's recent new taints
  TokenBucket refusal_events_;  // refusal_events_per_minute, a burst of as many
};

}  // namespace faultline
