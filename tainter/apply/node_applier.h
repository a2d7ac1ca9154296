// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/fault_event.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/apply/applier_apis.h"
#include "tainter/apply/dry_run_node_api.h"
#include "tainter/apply/metered_node_api.h"
#include "tainter/apply/node_pictures.h"
#include "tainter/apply/tainter_metrics.h"
#include "tainter/core/label_selector.h"
#include "tainter/core/pod_events.h"
#include "tainter/core/policy.h"
#include "tainter/core/reasons.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The tainter without Kafka: the Policy plus the applier that turns its
// decisions into NodeApi writes, with metrics. `faultline-tainter` feeds it
// from its Kafka consumer; `faultline-agent --standalone` hands events in
// directly.
//
// State on the node itself: faultline's taint (Options::taint) and an
// annotation (Options::annotation_key) listing the active reasons as JSON
// (tainter/core/reasons.h), bounded in size. AdoptAll() reads both back at start,
// so a restart never lifts a taint and never taints a node twice.
//
// Applying: the Policy returns each decision with its complete plan
// (NodePlan: the node write and the Events); the Tainter queues and executes
// it: at most one UpdateNode (taint and annotation in one optimistic write),
// then the planned CreateEvents. A taint or reasons write is built from the
// node as the watch last delivered it when there is such a picture (no GET:
// the patch's resourceVersion test refuses a node that moved, which is then
// read and merged), else from a read of the node. A write
// that fails with kUnavailable (or any error but kNotFound) stays queued per
// node, in order, and is retried by Tick() with exponential backoff; later
// events for that node queue behind it so the node's history is applied in
// order. kNotFound forgets the node. The queue is bounded (max_pending): past
// it the oldest work is dropped and counted. A caller never blocks on the API
// beyond one call's own timeout.
//
// Completion: Handle(event, done) calls `done` once the decision for the
// event is applied or deliberately dropped (duplicate, ignored, unmanaged,
// node gone, queue overflow), possibly from a later Tick(). The Kafka
// consumer commits an offset only after its `done`.
//
// Dry run: the nodes, Events and pods are wrapped in a DryRunNodeApi (the
// same one the standalone agent prints through): UpdateNode,
// PatchNodeConditions and CreateEvent never reach the API server; each
// write is logged and counted (faultline_tainter_dry_run_writes_total) and
// treated as applied. The valve counts in memory.
//
// The API: ApplierApis (tainter/apply/applier_apis.h), the capabilities its
// stack chose; without pods there are no pod Events, without a valve record
// the valve counts in memory.
//
// Thread-safety: none; one thread calls every method (the daemons' main loop).
// `apis`, `metrics` and `clock` must outlive the Tainter.
class Tainter {
 public:
  struct Options {
    NodeTaint taint{"faultline.dev/faulty", "true", "NoSchedule", ""};
    std::string annotation_key = "faultline.dev/reasons";
    // The node's recovery history (tainter/core/recovery.h): kept beside the
    // reasons annotation, which goes with the taint, so that it outlives
    // the lift it records (a recurring fault is recognised by it).
    std::string history_annotation_key = "faultline.dev/recoveries";
    std::size_t max_annotation_bytes = kDefaultMaxAnnotationBytes;
    std::string node_selector;                                 // label selector; empty: all nodes
    std::string opt_out_label = "faultline.dev/opt-out=true";  // key=value; empty: none
    Policy::Options policy;
    bool dry_run = false;
    std::chrono::milliseconds initial_backoff{500};
    std::chrono::milliseconds max_backoff{std::chrono::seconds(60)};
    std::size_t max_pending = 10'000;
    // How often Tick() re-reads every node (catches taints lifted by hand
    // and other replicas' taints, which the valve counts).
    std::chrono::seconds resync_interval{std::chrono::minutes(5)};
    // Refused taints waiting for capacity; past it the lowest severity,
    // then the oldest, is let go (done, counted).
    std::size_t max_parked = 1000;
    // API work per round (BeginRound(), once per main-loop iteration): past
    // it, queued work waits for the next round, so the loop returns to
    // Kafka's poll in time (max.poll.interval.ms). 0: no bound.
    std::chrono::milliseconds round_budget{0};
    // Set faultline's NodeConditions (GPUFault, ...) on nodes/status after
    // each taint, reasons or lift write (tainter/core/conditions.h).
    bool node_conditions = true;
    // After a new taint: a Warning Event on each pod running on the node
    // (tainter/core/pod_events.h), once the taint and the node's Events are in.
    PodEventOptions pod_events;
  };

  // kInvalidArgument: a bad node_selector, opt_out_label or taint.
  static Result<std::unique_ptr<Tainter>> Create(Options options, ApplierApis apis,
                                                 MetricsRegistry& metrics, const Clock& clock);
  ~Tainter();

  // Lists the managed nodes and adopts faultline's state from each. Call at
  // start before Handle(). kUnavailable etc. from ListNodes: nothing changed,
  // retry (Tick() also retries it while it has never succeeded).
  Status AdoptAll();

  using Done = std::function<void()>;
  // Decides one live event and applies the decision (see class comment).
  // By reference: most events are decided and applied within the call,
  // from the caller's event (the Kafka consumer's, whose buffers serve the
  // next message); only one that must wait (a queue for its node, a retry,
  // a valve reservation or refusal) is copied into the queue.
  void Handle(const FaultEvent& event, Done done = {});
  // An event decided before (re-read after a restart or rebalance): fills
  // the windows and the dedupe set only.
  void Replay(const FaultEvent& event);
  // Lapses expired reasons (lifting taints), retries pending work whose
  // backoff is over, and resyncs nodes every resync_interval. Call about
  // once a second.
  void Tick();
  // Starts a round of API work (see Options::round_budget).
  void BeginRound() { round_deadline_ = clock_.MonotonicNow() + options_.round_budget; }

  // Batched valve reservations (issue 30.4: a storm's new taints shared the
  // valve Lease's writes). Between HoldReservations() and ReserveHeld() a
  // new taint that needs its place in the fleet's valve record waits, its
  // node's queue behind it, instead of writing the record itself;
  // ReserveHeld() then reserves the waiting ones together, up to
  // kReservationsPerWrite in one compare-and-swap write of the record each,
  // and applies them. The daemon holds while it hands one Kafka poll's
  // events in. Outside the bracket (Tick's retries, the tests' Handle, the
  // standalone agent, which has no shared record) each new taint reserves
  // on its own, as before. Exactness: see ReserveNewTaints.
  void HoldReservations() { holding_ = true; }
  void ReserveHeld();
  // Each write's group is this small so that its last taint reaches its
  // node soon after the reservation: another replica counts a reserved node
  // it has not seen tainted for FleetValve::kWatchGrace (30 s) only.
  // ReserveHeld writes the group's nodes first (10 node writes: 2 s at the
  // default qps 5), their conditions, Events and pod Events after.
  static constexpr std::size_t kReservationsPerWrite = 10;
  void set_round_budget(std::chrono::milliseconds budget) { options_.round_budget = budget; }

  // `faultline-tainter untaint`: removes faultline's taint and its reasons
  // annotation (never other taints), records a Normal Event with `why`.
  // Works while the valve is shut. kNotFound: no such node;
  // kFailedPrecondition: the node carries no faultline taint or reasons.
  Status Untaint(const std::string& node, const std::string& why);

  // What the node watch (NodeInformer) saw, in order. A node with queued
  // work takes it once its queue is empty (our own write in flight must not
  // be undone by an older picture). With a watch, Tick() does not poll.
  void Observe(std::vector<NodeWatchChange> changes);
  void ObserveNode(const NodeInfo& node);
  void ObserveDeleted(const std::string& node);
  void set_watched(bool watched) { watched_ = watched; }

  // Which nodes this replica decides for (expiry, lifts): the Kafka
  // consumer answers "the owner of the node's partition". Unset (the
  // standalone agent, one replica): every node.
  void SetOwnership(std::function<bool(const std::string& node)> owns) { owns_ = std::move(owns); }
  // Fleet correlation (tainter/correlation/): an event for which this says
  // true names a peer that the correlator holds responsible; it is not held
  // against its own node: Handle() counts it (decision "attributed_to_peer")
  // and is done with it, Replay() leaves it out of the windows.
  void SetBlamesPeer(std::function<bool(const FaultEvent& event)> blames_peer) {
    blames_peer_ = std::move(blames_peer);
  }
  // Records one Event on `node` now (an incident attributed to it): one
  // attempt, not queued; the Event's deterministic name makes a repeat a
  // count, not a duplicate. Through the dry-run API when dry_run is set.
  Status RecordNodeEvent(const std::string& node, const PlannedEvent& event) {
    return Event(node, event);
  }
  // Records one Event as given (a job's owner, a pod): one attempt, not
  // queued, through the dry-run API when dry_run is set.
  Status RecordEvent(const NodeEvent& event);

  // The node needs a person (remediation: its drain ran past
  // drain.deadline). While faultline holds active reasons for it, its True
  // conditions carry the reason kNeedsPersonReason and a message that
  // starts with `why`; the conditions are written now (one attempt; the
  // watch's reconcile repeats a failed one). Forgotten once no active
  // reason is left (the fault lifted).
  static constexpr std::string_view kNeedsPersonReason = "FaultlineDrainTimedOut";
  void MarkNeedsPerson(const std::string& node, std::string why);

  // Drops the queued work of these nodes (their partition went to another
  // replica); their `done` callbacks are not called.
  void DropPendingFor(const std::function<bool(const std::string& node)>& pred);

  std::size_t pending() const;
  std::size_t parked() const { return parked_.size(); }
  bool adopted() const { return adopted_; }
  // The last NodeApi call's outcome: false after kUnavailable/kUnauthenticated.
  bool api_reachable() const { return metered_.reachable(); }
  Policy& policy() { return policy_; }
  const Options& options() const { return options_; }

 private:
  struct Work {
    bool decided = false;
    // The event to decide (kept: decided again if the node changed): Handle's
    // caller's while it decides without a queue (`borrowed`), else its own
    // copy (Own()), which work that waits must hold.
    FaultEvent event;
    const FaultEvent* borrowed = nullptr;
    const FaultEvent& Event() const { return borrowed != nullptr ? *borrowed : event; }
    void Own() {
      if (borrowed != nullptr) event = *borrowed;
      borrowed = nullptr;
    }
    Decision decision;  // decided: the decision to apply, with its plan
    bool update_done = false;
    bool reserved = false;  // kTaint: the valve record has its place
    // kTaint, held: the valve record's answer for it (empty: granted, its
    // place written; else the refusal), given by ReserveHeld.
    std::optional<std::string> valve_answer;
    // ReserveHeld's first pass: Execute stops after the node write (`paused`,
    // Process answers kHeld and keeps `read` for the conditions).
    bool pause_after_write = false;
    bool paused = false;
    bool again = false;            // a parked refusal: decided again (no dedupe, no second count)
    std::size_t events_done = 0;   // planned Events already recorded
    bool conditions_done = false;  // the node's conditions were brought in line
    bool pods_told = false;        // the pod Events of a new taint were tried
    // The node as this attempt read it for its write (SyncConditions takes its
    // conditions from it instead of a GET: a patch of the node never changes
    // its status). Cleared after every attempt, so a retry reads afresh.
    std::optional<NodeInfo> read;
    Done done;

    // Back to a new Work's state but for `event` (unread while `borrowed`)
    // and `decision`, which Policy::Decide overwrites whole in its buffers:
    // Handle's direct path reuses one Work for event after event.
    void Recycle() {
#ifdef __GLIBCXX__  // libstdc++'s sizes
      static_assert(sizeof(void*) != 8 || sizeof(Work) == kWorkSize,
                    "Work changed: reset the new member here, then kWorkSize");
#endif
      decided = false;
      borrowed = nullptr;
      update_done = false;
      reserved = false;
      valve_answer.reset();
      pause_after_write = false;
      paused = false;
      again = false;
      events_done = 0;
      conditions_done = false;
      pods_told = false;
      read.reset();
      done = nullptr;
    }
    static constexpr std::size_t kWorkSize = 1600;
  };
  struct NodeQueue {
    std::deque<Work> work;
    int attempts = 0;
    std::chrono::steady_clock::time_point next_try{};
  };
  // kHeld: a new taint waiting for ReserveHeld (it stays at its queue's front).
  enum class Step { kDone, kRetry, kHeld };

  Tainter(Options options, LabelSelector selector, LabelMatch opt_out, ApplierApis apis,
          MetricsRegistry& metrics, const Clock& clock);

  NodeQueue& Enqueue(const std::string& node, Work&& work);  // the node's queue, `work` last
  void Drain(const std::string& node);  // runs the node's queue until it must wait
  bool RoundOver(std::chrono::steady_clock::time_point now) const;  // BeginRound's budget spent
  void ScheduleRetry(NodeQueue& q);  // the queue's front failed: it waits its backoff
  // After the last step of `work`: parks it (a valve refusal, tried again
  // when the valve opens) and returns null, or returns its `done` to call.
  Done Settle(Work& work);
  Step Process(Work& work);
  Status Execute(Work& work);
  // kLift: re-reads the node first (into `work.read`); false when the lift
  // no longer applies (our taint is gone, or another replica extended a
  // reason). `work.decision.recovered`: the reasons the lift itself took
  // away (a reboot or clear recovery), which the annotation still holds.
  Result<bool> LiftStillDue(Work& work);
  // kLift: LiftStillDue, then the lift written against that read's version
  // (no second GET); a node that moved in between is read and judged again.
  Result<bool> WriteLift(Work& work);
  // kTaint, kReasons: re-read the node, merge its live reasons with the
  // plan's, write with the version read (kAborted: moved, try again).
  // kTaint: takes a place in the fleet's valve record (a Lease every replica
  // updates optimistically): empty when granted (or there is no shared
  // record), else which limit refuses it.
  Result<std::string> ReserveNewTaint(const std::string& node);
  // The same for several nodes in one write: an answer per node, in order.
  Result<std::vector<std::string>> ReserveNewTaints(const std::vector<std::string>& nodes);
  // The node's queue starts with a held new taint (Step::kHeld) not yet answered.
  bool HeldTaintFirst(const std::string& node) const;
  enum class Written { kYes, kNothingToDo, kDecidedAgain };
  Result<Written> WriteReasons(Work& work);
  bool Queued(const std::string& node) const;
  // A taint the valve refused is parked, its `done` held (its offset is not
  // committed), and decided again when capacity returns (RetryParked).
  bool Parkable(const Work& work) const;
  void RetryParked();
  void ApplyDeferred(const std::string& node);
  Status LearnNode(const std::string& node);
  // `read_at`: when the read that returned `node` started (a node seen
  // then counts as seen only from then: a reservation another replica made
  // while the read was under way is still counted by the valve); a watched
  // node, as it arrives.
  void AdoptNode(const NodeInfo& node, bool merge_memory,
                 std::optional<std::chrono::system_clock::time_point> read_at = std::nullopt);
  bool HasOurTaint(const NodeInfo& node) const;
  NodeChange ChangeFor(const NodePlan& plan) const;
  Status Update(const std::string& node, const NodeChange& change);
  Status Event(const std::string& node, const PlannedEvent& planned);
  // The pod Events of a new taint (Options::pod_events): one pod list, then
  // one Event per pod, best effort: a failure is logged and counted, never
  // retried, and never holds the node's queue (the taint is already in).
  void TellPods(const std::string& node, const Reason& reason);
  // Past pod_events.node_lists_per_minute: the waiting nodes' pods, from one
  // listing of the cluster's running pods (called by Tick()).
  void TellWaitingPods();
  void ListWaitingPods();  // the waiting nodes' pods: one shared listing, or one list each
  std::optional<std::vector<PodInfo>> ListNodePods(const std::string& node);
  void TellListedPods(const std::string& node, const Reason& reason, std::vector<PodInfo> pods);
  // Brings the node's conditions in line with its active reasons
  // (ConditionUpdates): one status PATCH if anything changed, computed from
  // `seen` (the node as just read or watched) or else from a GET.
  Status SyncConditions(const std::string& node, const NodeInfo* seen = nullptr);
  // SyncConditions when `node` as observed disagrees with the active reasons.
  void ReconcileConditions(const NodeInfo& node);
  // ConditionUpdates for `node`, with MarkNeedsPerson's reason and message
  // on its True conditions while it holds.
  std::vector<NodeCondition> ConditionsToWrite(const std::string& node,
                                               const std::vector<NodeCondition>& live,
                                               const std::vector<Reason>& active,
                                               const std::set<std::string>& owned);
  // `retried`: a parked fault decided again (its refusal was counted).
  void Count(const Decision& d, bool retried = false);
  void MarkAdopted();
  void UpdateGauges();

  Options options_;
  LabelSelector selector_;
  LabelMatch opt_out_;
  TainterMetrics m_;
  std::unique_ptr<DryRunNodeApi> dry_api_;  // dry run: metered_ passes calls to it
  MeteredNodeApi metered_;                  // every call's latency, errors, reachability
  ApplierApis api_;                         // metered_'s: every call goes through it
  const Clock& clock_;
  Policy policy_;
  std::map<std::string, NodeQueue> queues_;
  Work direct_;               // Handle's work for an event decided without a queue (reused)
  bool direct_busy_ = false;  // direct_ is deciding (a Handle within a Handle takes another)
  std::map<std::string, std::string> node_uids_;
  std::size_t pending_ = 0;
  bool adopted_ = false;
  bool watched_ = false;
  // When each node's state was last read or watched (wall clock): a valve
  // reservation newer than that is a taint our cache has not seen yet.
  std::map<std::string, std::chrono::system_clock::time_point> observed_at_;
  std::deque<Work> parked_;
  std::chrono::steady_clock::time_point round_deadline_{};
  bool holding_ = false;          // HoldReservations() until ReserveHeld()
  std::deque<std::string> held_;  // nodes whose new taint waits for ReserveHeld, in order
  std::function<bool(const std::string&)> owns_;
  std::function<bool(const FaultEvent&)> blames_peer_;
  // Watch news for nodes with queued work; nullopt: deleted.
  std::map<std::string, std::optional<NodeInfo>> deferred_;
  // The watch's pictures of the nodes, for a new taint's write without a GET
  // (node_pictures.h). None without a watch (the standalone agent, Slurm)
  // or in a dry run.
  NodePictures pictures_;
  // Refusal Events over the fleet-wide budget since the last one recorded
  // (the warning is logged once a streak).
  std::uint64_t refusal_events_over_budget_ = 0;
  // Per node, the condition types faultline has held True here (besides
  // kFaultConditionTypes): a custom `condition:` type is set back to False
  // on lift although no active reason names it any more.
  std::map<std::string, std::set<std::string>> condition_types_;
  std::map<std::string, std::string> needs_person_;  // node -> why (MarkNeedsPerson)
  std::chrono::steady_clock::time_point next_resync_{};
  // Pod notices (pod_notices.cc): when the last minute's per-node pod lists
  // were sent, and the new taints waiting for the shared listing.
  struct PodsWaiting {
    std::string node;
    Reason reason;
    bool listed = false;  // `pods` holds the shared listing's pods of the node
    std::vector<PodInfo> pods;
  };
  std::deque<std::chrono::steady_clock::time_point> pod_lists_;
  std::deque<PodsWaiting> pods_waiting_;
  std::size_t pods_unlisted_ = 0;      // the waiting nodes not yet listed (the last ones)
  std::size_t pods_shared_pages_ = 0;  // pages of the last shared listing (0: none yet)
  std::chrono::steady_clock::time_point pods_due_{};
};

}  // namespace faultline
