// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/node_applier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "base/fault_event.h"
#include "base/log.h"

namespace faultline {
namespace {

constexpr std::size_t kMaxEventMessageBytes = 1024;

// Errors a later attempt may cure; anything else is a bug or a permanent
// refusal, where retrying only hides the problem.
bool Retryable(StatusCode code) {
  switch (code) {
    case StatusCode::kUnavailable:
    case StatusCode::kAborted:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:  // RBAC may be fixed while we wait
    case StatusCode::kResourceExhausted:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<std::unique_ptr<Tainter>> Tainter::Create(Options options, ApplierApis apis,
                                                 MetricsRegistry& metrics, const Clock& clock) {
  Result<LabelSelector> selector = LabelSelector::Parse(options.node_selector);
  if (!selector) return InvalidArgumentError("node_selector: " + selector.error().message());
  Result<LabelMatch> opt_out = LabelMatch::Parse(options.opt_out_label);
  if (!opt_out) return InvalidArgumentError("opt_out_label: " + opt_out.error().message());
  if (options.taint.key.empty()) return InvalidArgumentError("taint.key is empty");
  if (options.taint.effect != "NoSchedule" && options.taint.effect != "PreferNoSchedule" &&
      options.taint.effect != "NoExecute") {
    return InvalidArgumentError("taint.effect '" + options.taint.effect +
                                "' is not NoSchedule, PreferNoSchedule or NoExecute");
  }
  if (options.annotation_key.empty()) return InvalidArgumentError("annotation key is empty");
  return std::unique_ptr<Tainter>(new Tainter(std::move(options), std::move(*selector),
                                              std::move(*opt_out), apis, metrics, clock));
}

Tainter::Tainter(Options options, LabelSelector selector, LabelMatch opt_out, ApplierApis apis,
                 MetricsRegistry& metrics, const Clock& clock)
    : options_(std::move(options)),
      selector_(std::move(selector)),
      opt_out_(std::move(opt_out)),
      m_(metrics),
      dry_api_(options_.dry_run
                   ? std::make_unique<DryRunNodeApi>(
                         DryRunNodeApi::Options{
                             .out = nullptr, .metrics = &m_, .only_node = {}, .events = {}},
                         clock, &apis.nodes, apis.pods)
                   : nullptr),
      // A dry run writes through the dry-run API and counts the valve in memory.
      metered_(dry_api_ ? ApplierApis{*dry_api_, *dry_api_,
                                      apis.pods != nullptr ? dry_api_.get() : nullptr, nullptr}
                        : apis,
               m_, clock),
      api_(metered_.apis()),
      clock_(clock),
      policy_(options_.policy, clock),
      pictures_({options_.annotation_key, options_.history_annotation_key},
                {std::string(kNeedsInspectionLabel)}) {
  UpdateGauges();
}

Tainter::~Tainter() = default;

bool Tainter::HasOurTaint(const NodeInfo& node) const {
  return std::any_of(node.taints.begin(), node.taints.end(),
                     [&](const NodeTaint& t) { return t.SameAs(options_.taint); });
}

void Tainter::AdoptNode(const NodeInfo& node, bool merge_memory,
                        std::optional<std::chrono::system_clock::time_point> read_at) {
  observed_at_[node.name] = read_at.value_or(clock_.Now());
  const bool managed = selector_.Matches(node.labels);
  policy_.SetNode(node.name, managed, opt_out_.Matches(node.labels));
  node_uids_[node.name] = node.uid;
  const bool tainted = HasOurTaint(node);
  policy_.SetBootId(node.name, node.boot_id);
  if (auto h = node.annotations.find(options_.history_annotation_key);
      h != node.annotations.end()) {
    policy_.SetHistory(node.name, DecodeRecoveries(h->second));
  }
  std::vector<Reason> reasons;
  if (auto a = node.annotations.find(options_.annotation_key); a != node.annotations.end()) {
    Result<std::vector<Reason>> decoded = DecodeReasons(a->second);
    if (decoded) {
      reasons = std::move(*decoded);
    } else {
      m_.bad_annotations.Inc();
      LogWarning("tainter", "unreadable reasons annotation; adopting the taint without them",
                 {{"node", node.name}, {"error", decoded.error().message()}});
    }
  }
  if (merge_memory && tainted && policy_.IsTainted(node.name)) {
    // Both may be newer than the other: the annotation if another replica
    // wrote it, memory if a repeat was not yet persisted. Keep the later.
    for (Reason& mine : policy_.ActiveReasons(node.name)) {
      auto it = std::find_if(reasons.begin(), reasons.end(),
                             [&](const Reason& r) { return r.rule == mine.rule; });
      if (it == reasons.end()) {
        if (mine.rule != Reason::kAdoptedRule || reasons.empty()) {
          reasons.push_back(std::move(mine));
        }
      } else if (mine.last_seen > it->last_seen) {
        *it = std::move(mine);
      }
    }
  }
  policy_.Adopt(node.name, tainted, std::move(reasons));
}

Status Tainter::AdoptAll() {
  const auto read_at = clock_.Now();
  Result<std::vector<NodeInfo>> nodes = api_.nodes.ListNodes(selector_.text());
  FL_RETURN_IF_ERROR(nodes.status());
  for (const NodeInfo& n : *nodes) {
    if (auto q = queues_.find(n.name); q != queues_.end() && !q->second.work.empty()) continue;
    AdoptNode(n, /*merge_memory=*/adopted_, read_at);
    ReconcileConditions(n);
  }
  MarkAdopted();
  next_resync_ = clock_.MonotonicNow() + options_.resync_interval;
  UpdateGauges();
  return OkStatus();
}

Status Tainter::LearnNode(const std::string& node) {
  const auto read_at = clock_.Now();
  Result<NodeInfo> info = api_.nodes.GetNode(node);
  FL_RETURN_IF_ERROR(info.status());
  AdoptNode(*info, /*merge_memory=*/false, read_at);
  return OkStatus();
}

void Tainter::Handle(const FaultEvent& event, Done done) {
  m_.events.Inc();
  if (blames_peer_ && blames_peer_(event)) {
    m_.Decisions("attributed_to_peer").Inc();
    if (done) done();
    return;
  }
  const std::string& node = event.node;
  if (queues_.find(node) != queues_.end() || RoundOver(clock_.MonotonicNow())) {
    Work work;
    work.event = event;
    work.done = std::move(done);
    Enqueue(node, std::move(work));
    Drain(node);
    UpdateGauges();
    return;
  }
  // Nothing waits for this node: decided here, without a queue (whose
  // deque and map entry cost more than most decisions, issue 12.4), from
  // the caller's event, in the Work the last such event used (the policy
  // writes the decision into its buffers); work that waits keeps a copy of
  // the event. A Handle from within this one (a `done` called back) uses
  // a Work of its own.
  std::optional<Work> spare;  // built only then: a Work is two events' worth of members
  Work& work = direct_busy_ ? spare.emplace() : direct_;
  const bool reusing = !direct_busy_;
  direct_busy_ = true;
  work.Recycle();
  work.borrowed = &event;
  work.done = std::move(done);
  switch (Process(work)) {
    case Step::kDone:
      if (Done finished = Settle(work)) finished();
      ApplyDeferred(node);
      break;
    case Step::kRetry:
      work.Own();
      ScheduleRetry(Enqueue(node, std::move(work)));
      break;
    case Step::kHeld:
      work.Own();
      Enqueue(node, std::move(work));
      held_.push_back(node);
      break;
  }
  if (reusing) direct_busy_ = false;
  UpdateGauges();
}

void Tainter::Replay(const FaultEvent& event) {
  m_.replayed.Inc();
  if (blames_peer_ && blames_peer_(event)) return;
  policy_.Replay(event);
}

Tainter::NodeQueue& Tainter::Enqueue(const std::string& node, Work&& work) {
  while (pending_ >= options_.max_pending && pending_ > 0) {
    // Shed the oldest work of the node that has waited longest: the API has
    // been failing for a long time, and an unbounded backlog would only grow.
    auto victim =
        std::min_element(queues_.begin(), queues_.end(), [](const auto& a, const auto& b) {
          if (a.second.work.empty() != b.second.work.empty()) return !a.second.work.empty();
          return a.second.next_try < b.second.next_try;
        });
    if (victim == queues_.end() || victim->second.work.empty()) break;
    Done dropped = std::move(victim->second.work.front().done);
    victim->second.work.pop_front();
    if (victim->second.work.empty()) queues_.erase(victim);
    --pending_;
    m_.dropped_work.Inc();
    if (dropped) dropped();
  }
  NodeQueue& q = queues_[node];
  q.work.push_back(std::move(work));
  ++pending_;
  return q;
}

void Tainter::Drain(const std::string& node) {
  auto it = queues_.find(node);
  if (it == queues_.end()) return;
  NodeQueue& q = it->second;
  while (!q.work.empty()) {
    const auto now = clock_.MonotonicNow();  // once per item: a clock read is not free
    if (q.attempts > 0 && now < q.next_try) return;
    // Out of this round's time: the queue waits for the next Tick, and the
    // main loop gets back to Kafka (one thread; max.poll.interval.ms).
    if (RoundOver(now)) return;
    const Step step = Process(q.work.front());
    if (step == Step::kRetry) {
      ScheduleRetry(q);
      return;
    }
    if (step == Step::kHeld) {
      if (HeldTaintFirst(node)) held_.push_back(node);  // else paused by ReserveHeld
      return;
    }
    Done finished = Settle(q.work.front());
    q.work.pop_front();
    --pending_;
    q.attempts = 0;
    if (finished) finished();
  }
  queues_.erase(it);
  ApplyDeferred(node);
}

bool Tainter::RoundOver(std::chrono::steady_clock::time_point now) const {
  return options_.round_budget.count() > 0 && now >= round_deadline_;
}

void Tainter::ScheduleRetry(NodeQueue& q) {
  if (!q.work.empty()) q.work.front().pause_after_write = false;  // retried whole, by Tick
  ++q.attempts;
  auto backoff = options_.initial_backoff * (1LL << std::min(q.attempts - 1, 16));
  q.next_try =
      clock_.MonotonicNow() + std::min<std::chrono::milliseconds>(backoff, options_.max_backoff);
}

Tainter::Done Tainter::Settle(Work& work) {
  // Moved out only to be parked (a move of a whole event is not free);
  // usually only its `done` is left to call.
  if (!Parkable(work)) return std::move(work.done);
  work.Own();
  parked_.push_back(std::move(work));
  if (parked_.size() > options_.max_parked) {
    auto victim =
        std::min_element(parked_.begin(), parked_.end(), [](const Work& a, const Work& b) {
          return a.event.severity < b.event.severity;  // the first of the lowest severity: oldest
        });
    Done dropped = std::move(victim->done);
    parked_.erase(victim);
    m_.dropped_work.Inc();
    if (dropped) dropped();
  }
  return nullptr;
}

bool Tainter::Parkable(const Work& work) const {
  return work.decision.outcome == DecisionOutcome::kRefusedByValve &&
         work.Event().action == Action::kTaint && !work.Event().rule.empty();
}

void Tainter::RetryParked() {
  if (parked_.empty() || policy_.tainted_nodes() >= policy_.FleetLimit()) return;
  // The most severe first, the oldest among equals: a flood of forged
  // low-severity taints cannot keep a real hardware fault waiting.
  auto best = std::max_element(parked_.begin(), parked_.end(), [](const Work& a, const Work& b) {
    return a.event.severity < b.event.severity;
  });
  Work work = std::move(*best);
  parked_.erase(best);
  const auto now = clock_.Now();
  if (work.event.expire && work.event.detected_time + *work.event.expire <= now) {
    if (work.done) work.done();  // its quiet period is over: nothing to retry
    return;
  }
  work.decided = false;
  work.again = true;
  work.reserved = false;
  work.valve_answer.reset();
  work.update_done = false;
  work.events_done = 0;
  const std::string node = work.event.node;
  Enqueue(node, std::move(work));
  Drain(node);
}

Tainter::Step Tainter::Process(Work& work) {
  if (!work.decided) {
    const FaultEvent& event = work.Event();
    const std::string& node = event.node;
    if (!policy_.Knows(node)) {
      Status s = LearnNode(node);
      if (s.code() == StatusCode::kNotFound) {
        m_.Decisions("unknown_node").Inc();
        return Step::kDone;
      }
      if (!s.ok()) return Retryable(s.code()) ? Step::kRetry : Step::kDone;
    }
    if (work.again) {
      policy_.Redecide(event, work.decision);
    } else {
      policy_.Decide(event, work.decision);
    }
    work.decided = true;
    // A taint is counted once the fleet's valve record granted it (Execute);
    // a parked fault's refusal once, when it was parked.
    if (work.decision.outcome != DecisionOutcome::kTaint) Count(work.decision, work.again);
  }
  if (holding_ && api_.valve != nullptr && work.decision.outcome == DecisionOutcome::kTaint &&
      !work.reserved && !work.valve_answer) {
    return Step::kHeld;  // reserved with the others held (ReserveHeld)
  }
  Status s = Execute(work);
  if (s.ok() && work.paused) {
    work.paused = false;  // the rest in ReserveHeld's second pass, from the same read
    return Step::kHeld;
  }
  work.read.reset();  // a retry reads afresh
  if (s.ok()) return Step::kDone;
  if (s.code() == StatusCode::kNotFound) {
    policy_.ForgetNode(work.decision.node);
    pictures_.Drop(work.decision.node);
    return Step::kDone;
  }
  if (Retryable(s.code())) return Step::kRetry;
  LogError("tainter", "dropping a decision the API server refused",
           {{"node", work.decision.node},
            {"outcome", DecisionOutcomeName(work.decision.outcome)},
            {"error", s.ToString()}});
  return Step::kDone;
}

void Tainter::Count(const Decision& d, bool retried) {
  m_.Decisions(d.outcome).Inc();
  if (d.outcome == DecisionOutcome::kRefusedByValve) {
    // A parked fault is decided again at every tick while the fleet has
    // room; the rate can refuse it each time. It is one refused taint.
    if (!retried) m_.TaintsRefused(d.reason.rule).Inc();
    // Logged as the Event is due, per node and rule; an Event over the
    // fleet-wide budget is counted, and its refusal still logged.
    if (d.emit_event || d.event_suppressed) {
      LogWarning("tainter", "safety valve refused a taint",
                 {{"node", d.node},
                  {"rule", d.reason.rule},
                  {"valve", d.detail},
                  {"event", d.emit_event ? "recorded" : "over valve.refusal_events_per_minute"}});
    }
    if (d.emit_event) refusal_events_over_budget_ = 0;
    if (d.event_suppressed) {
      m_.refusal_events_suppressed.Inc();
      if (refusal_events_over_budget_++ == 0) {  // once a streak
        LogWarning("tainter",
                   "refusal Events over valve.refusal_events_per_minute: counted in "
                   "faultline_tainter_refusal_events_suppressed_total, not recorded",
                   {{"per_minute", options_.policy.refusal_events_per_minute}});
      }
    }
  }
}

NodeChange Tainter::ChangeFor(const NodePlan& plan) const {
  NodeChange change;
  switch (plan.write) {
    case NodePlan::Write::kTaint:
    case NodePlan::Write::kReasons:
      // Reasons are written together with the taint they justify (the add
      // is a no-op while the taint is there).
      change.add_taint = options_.taint;
      change.annotations[options_.annotation_key] =
          EncodeReasons(plan.reasons, options_.max_annotation_bytes);
      // The label an RMA workflow selects on: set with the reason that
      // needs inspection, removed only with the taint (a person's untaint).
      if (std::any_of(plan.reasons.begin(), plan.reasons.end(),
                      [](const Reason& r) { return r.inspection; })) {
        change.labels[std::string(kNeedsInspectionLabel)] = "true";
      }
      break;
    case NodePlan::Write::kLift:
      change.remove_taint = options_.taint;
      change.annotations[options_.annotation_key] = std::nullopt;
      change.labels[std::string(kNeedsInspectionLabel)] = std::nullopt;
      break;
    case NodePlan::Write::kNone:
      break;
  }
  if (plan.write != NodePlan::Write::kNone && !plan.history.empty()) {
    change.annotations[options_.history_annotation_key] = EncodeRecoveries(plan.history);
  }
  return change;
}

Status Tainter::Update(const std::string& node, const NodeChange& change) {
  pictures_.Drop(node);  // our write moves the node past the watch's picture
  return api_.nodes.UpdateNode(node, change);
}

Status Tainter::Event(const std::string& node, const PlannedEvent& planned) {
  NodeEvent e;
  e.node = node;
  if (auto it = node_uids_.find(node); it != node_uids_.end()) e.node_uid = it->second;
  e.type = planned.type;
  e.reason = planned.reason;
  e.message = planned.message;
  Status s = api_.events.CreateEvent(e);
  // An Event is evidence, not state: one the server refuses for good is
  // logged and dropped rather than holding the node's queue.
  if (!s.ok() && !Retryable(s.code()) && s.code() != StatusCode::kNotFound) {
    LogWarning("tainter", "event refused", {{"node", node}, {"error", s.ToString()}});
    return OkStatus();
  }
  return s;
}

Result<bool> Tainter::LiftStillDue(Work& work) {
  const std::string& node = work.decision.node;
  const std::vector<Recovery>& lifted = work.decision.recovered;
  // Re-read the node: another replica may have extended a reason since
  // this one last looked. Its live reasons win over our lift.
  Result<NodeInfo> info = api_.nodes.GetNode(node);
  FL_RETURN_IF_ERROR(info.status());
  work.read = *info;
  if (!HasOurTaint(*info)) return false;
  if (auto a = info->annotations.find(options_.annotation_key); a != info->annotations.end()) {
    if (Result<std::vector<Reason>> rs = DecodeReasons(a->second); rs) {
      const auto now = clock_.Now();
      std::erase_if(*rs, [&](const Reason& r) { return r.expires_at && *r.expires_at <= now; });
      DropRecovered(*rs, lifted);
      if (!rs->empty()) {
        policy_.Adopt(node, true, std::move(*rs));
        return false;
      }
    }
  }
  return true;
}

Result<bool> Tainter::WriteLift(Work& work) {
  for (int attempt = 1;; ++attempt) {
    Result<bool> due = LiftStillDue(work);
    if (!due || !*due) return due;
    NodeChange change = ChangeFor(work.decision.plan);
    change.expected_resource_version = work.read->resource_version;
    Status s = Update(work.decision.node, change);
    if (s.ok()) return true;
    if (s.code() != StatusCode::kAborted || attempt >= 3) return s;
  }
}

Status Tainter::Execute(Work& work) {
  const Decision& d = work.decision;
  const NodePlan& plan = d.plan;
  const std::string& node = d.node;
  if (d.outcome == DecisionOutcome::kTaint && !work.reserved) {
    Result<std::string> refusal =
        work.valve_answer ? Result<std::string>(*std::move(work.valve_answer))  // ReserveHeld's
                          : ReserveNewTaint(node);
    work.valve_answer.reset();
    if (!refusal) return refusal.error();
    work.reserved = true;
    if (!refusal->empty()) {
      work.decision = policy_.RefuseTaint(work.decision, work.Event(), *refusal);
      Count(work.decision);
      return Execute(work);
    }
    Count(work.decision);
  }
  if (!work.update_done && plan.write != NodePlan::Write::kNone) {
    if (plan.write == NodePlan::Write::kLift) {
      Result<bool> lifted = WriteLift(work);
      if (!lifted) return lifted.error();
      if (!*lifted) return OkStatus();  // nothing to lift, nothing to record
    } else {
      Result<Written> written = WriteReasons(work);
      if (!written) return written.error();
      if (*written == Written::kNothingToDo) return OkStatus();
      if (*written == Written::kDecidedAgain) return Execute(work);  // never a kReasons again
    }
    work.update_done = true;
    if (plan.write == NodePlan::Write::kTaint) {
      m_.taints_added.Inc();
      LogInfo("tainter", options_.dry_run ? "would taint node" : "tainted node",
              {{"node", node}, {"rule", d.reason.rule}, {"event_id", d.event_id}});
    } else if (plan.write == NodePlan::Write::kLift) {
      // The way the last reason went: expired, reboot or clear.
      std::string how = d.recovered.empty() ? "expire" : d.recovered.back().how;
      if (how == "expire") how = "expired";
      m_.TaintsLifted(how).Inc();
      LogInfo("tainter", options_.dry_run ? "would lift taint" : "lifted taint",
              {{"node", node},
               {"why", how == "expired" ? "every reason expired" : "returned to service: " + how}});
    }
    for (const Recovery& r : d.recovered) {
      LogInfo("tainter", "reason recovered",
              {{"node", node}, {"rule", r.rule}, {"how", r.how}, {"detail", r.detail}});
    }
  }
  work.update_done = true;
  if (work.pause_after_write && plan.write != NodePlan::Write::kNone) {
    work.pause_after_write = false;  // ReserveHeld's first pass ends with the node write
    work.paused = true;
    return OkStatus();
  }
  if (!work.conditions_done && plan.write != NodePlan::Write::kNone) {
    // After the taint, before the Events: a remediation tool watching the
    // condition sees the fault once the node is out of scheduling.
    Status s = SyncConditions(node, work.read ? &*work.read : nullptr);
    if (s.code() == StatusCode::kUnavailable) return s;  // retried with backoff
    if (!s.ok()) {
      // RBAC without nodes/status, a 422...: the taint stands regardless.
      LogWarning("tainter", "could not set node conditions",
                 {{"node", node}, {"error", s.message()}});
    }
    work.conditions_done = true;
  }
  for (; work.events_done < plan.events.size(); ++work.events_done) {
    FL_RETURN_IF_ERROR(Event(node, plan.events[work.events_done]));
  }
  // Last, so they never delay the taint: tell the pods on the node.
  if (!work.pods_told && plan.write == NodePlan::Write::kTaint && options_.pod_events.enabled) {
    work.pods_told = true;
    TellPods(node, d.reason);
  }
  return OkStatus();
}

Status Tainter::RecordEvent(const NodeEvent& event) { return api_.events.CreateEvent(event); }

// The reasons to write: the plan's, plus live ones the plan does not know
// (another writer's), the later copy of a rule seen on both sides. Expired
// live reasons are left out: they lapse here as in memory.
namespace {
std::vector<Reason> MergeReasons(std::vector<Reason> planned, const std::vector<Reason>& live,
                                 std::chrono::system_clock::time_point now) {
  for (const Reason& r : live) {
    if (r.expires_at && *r.expires_at <= now) continue;
    auto it = std::find_if(planned.begin(), planned.end(),
                           [&](const Reason& p) { return p.rule == r.rule; });
    if (it == planned.end()) {
      if (r.rule != Reason::kAdoptedRule) planned.push_back(r);
    } else if (r.last_seen > it->last_seen) {
      *it = r;
    }
  }
  return planned;
}
}  // namespace

Result<Tainter::Written> Tainter::WriteReasons(Work& work) {
  const std::string node = work.decision.node;
  // The first attempt writes from the watch's picture of the node when there
  // is one (no GET): the patch's test of its resourceVersion makes the server
  // refuse it if the node moved since (another replica's reasons, a by-hand
  // untaint), and the attempts after that read the node and merge again.
  std::optional<NodeBase> picture = pictures_.Take(node);
  for (int reads = 0;;) {
    // Re-read before writing: the plan was made from memory, and the node
    // may have changed since (a by-hand untaint, another replica's reason).
    // `read_at`, when the read started, stamps the node if it is adopted
    // below (AdoptNode: the valve counts another replica's reservation made
    // after it as a taint not yet seen).
    //
    // A picture is never adopted here, so it needs no such time. It was
    // adopted when the watch delivered it, stamped when Observe took it,
    // which is later than the server wrote that version (the watch's delay,
    // the main loop's round): no lower bound of what the picture shows, and
    // adopting it again now would only stamp it later. A write from it
    // decides nothing for the valve (the reservation came first, from the
    // Lease and the other nodes' stamps), and the server's test makes it
    // exactly as safe as a write after a GET. Where it would have to be
    // adopted (a kReasons write and the picture lacks our taint), the node
    // is read instead.
    const bool from_picture = picture && !(work.decision.plan.write == NodePlan::Write::kReasons &&
                                           !HasOurTaint(picture->node));
    if (!from_picture) picture.reset();
    const auto read_at = clock_.Now();
    Result<NodeInfo> live =
        from_picture ? Result<NodeInfo>(picture->node) : api_.nodes.GetNode(node);
    FL_RETURN_IF_ERROR(live.status());
    node_uids_[node] = live->uid;
    work.read = *live;
    const NodePlan& plan = work.decision.plan;
    if (plan.write == NodePlan::Write::kReasons && !HasOurTaint(*live)) {
      // Our taint was lifted since the decision: the old reasons go with it.
      AdoptNode(*live, /*merge_memory=*/false, read_at);
      if (work.Event().rule.empty()) return Written::kNothingToDo;  // an expiry's update
      // A new fault on a node lifted by hand is a new taint: the valve decides.
      policy_.Redecide(work.Event(), work.decision);
      if (work.decision.outcome != DecisionOutcome::kTaint) Count(work.decision);
      return Written::kDecidedAgain;
    }
    std::vector<Reason> live_reasons;  // an annotation without our taint is a leftover: ignored
    if (auto a = live->annotations.find(options_.annotation_key);
        a != live->annotations.end() && HasOurTaint(*live)) {
      if (auto rs = DecodeReasons(a->second); rs) live_reasons = std::move(*rs);
    }
    DropRecovered(live_reasons, work.decision.recovered);  // this decision lifted them
    std::vector<Reason> merged = MergeReasons(plan.reasons, live_reasons, clock_.Now());
    if (merged.size() != plan.reasons.size() || merged != plan.reasons) {
      policy_.Adopt(node, true, merged);  // memory learns what the node said
    }
    NodePlan write = plan;
    write.reasons = std::move(merged);
    NodeChange change = ChangeFor(write);
    change.expected_resource_version = live->resource_version;
    change.base = from_picture ? &*picture : nullptr;
    Status s = Update(node, change);
    if (s.ok()) return Written::kYes;
    if (s.code() != StatusCode::kAborted) return s;
    if (from_picture) {  // not an attempt: the reads after it get their three
      picture.reset();
      continue;
    }
    if (++reads >= 3) return s;
  }
}

Result<std::string> Tainter::ReserveNewTaint(const std::string& node) {
  Result<std::vector<std::string>> answers = ReserveNewTaints({node});
  FL_RETURN_IF_ERROR(answers.status());
  return std::move(answers->front());
}

// Exactness, across replicas and restarts, as for one node at a time: the
// record is read, each node in turn is judged by FleetValve::Reserve over
// the record as it stands after the grants before it (each granted node
// also counts as tainted for the ones after it), and the result is written
// back in one PUT that the API server accepts only at the version read
// (409 otherwise: read again and judge the whole group afresh). So the
// group's write is the same as its nodes' single writes, one after the
// other, with no other replica's write between them; every replica's grant
// was judged against every reservation committed before it. Refused nodes
// add nothing to the record; a group with no grant writes nothing.
Result<std::vector<std::string>> Tainter::ReserveNewTaints(const std::vector<std::string>& nodes) {
  std::vector<std::string> answers(nodes.size());
  // No shared record (the standalone agent, a dry run): the in-memory valve decided.
  if (api_.valve == nullptr) return answers;
  const std::set<std::string> asking(nodes.begin(), nodes.end());
  FleetValve::FleetView view;
  view.managed = policy_.managed_nodes();
  // The nodes asking are already tainted in memory (decided, not yet
  // granted): none of them counts for another until granted.
  for (const std::string& n : policy_.TaintedNodes()) {
    if (asking.count(n) == 0 && policy_.IsManaged(n)) view.tainted.insert(n);
  }
  view.unseen = [&](const std::string& reserved, std::chrono::system_clock::time_point at) {
    auto seen = observed_at_.find(reserved);
    return (seen == observed_at_.end() || seen->second < at) && policy_.IsManaged(reserved);
  };
  for (int attempt = 1; attempt <= 5; ++attempt) {
    Result<SharedRecord> record = api_.valve->GetValveRecord();
    FL_RETURN_IF_ERROR(record.status());
    const auto now = clock_.Now();
    FleetValve::FleetView grown = view;
    std::string value = std::move(record->value);
    bool granted = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      FleetValve::FleetAnswer answer = policy_.valve().Reserve(value, nodes[i], grown, now);
      answers[i] = std::move(answer.refusal);
      if (!answers[i].empty()) continue;
      value = std::move(answer.record);
      grown.tainted.insert(nodes[i]);
      granted = true;
    }
    if (!granted) return answers;
    Status put = api_.valve->PutValveRecord(value, record->resource_version);
    if (put.code() == StatusCode::kAborted || put.code() == StatusCode::kAlreadyExists) continue;
    FL_RETURN_IF_ERROR(put);
    return answers;
  }
  return UnavailableError("valve record: still conflicting after 5 attempts");
}

bool Tainter::HeldTaintFirst(const std::string& node) const {
  auto it = queues_.find(node);
  if (it == queues_.end() || it->second.work.empty()) return false;
  const Work& w = it->second.work.front();
  return w.decided && w.decision.outcome == DecisionOutcome::kTaint && !w.reserved &&
         !w.valve_answer;
}

void Tainter::ReserveHeld() {
  holding_ = false;
  while (!held_.empty() && !RoundOver(clock_.MonotonicNow())) {
    std::vector<std::string> group;
    while (!held_.empty() && group.size() < kReservationsPerWrite) {
      std::string node = std::move(held_.front());
      held_.pop_front();
      // Gone since (its partition revoked, reserved alone by a Tick) or listed twice: skipped.
      if (HeldTaintFirst(node) && std::find(group.begin(), group.end(), node) == group.end()) {
        group.push_back(std::move(node));
      }
    }
    if (group.empty()) break;
    Result<std::vector<std::string>> answers = ReserveNewTaints(group);
    if (!answers) {
      // The API fails: each waits its backoff and is then reserved alone (Tick).
      std::set<std::string> waiting(group.begin(), group.end());
      for (const std::string& node : held_) {
        if (HeldTaintFirst(node)) waiting.insert(node);
      }
      held_.clear();
      for (const std::string& node : waiting) ScheduleRetry(queues_[node]);
      LogWarning("tainter", "cannot reserve new taints in the valve record",
                 {{"nodes", group.size()}, {"error", answers.error().ToString()}});
      break;
    }
    // Two passes: first every granted node's write (the taint), then each
    // node's conditions, Events, pod Events and the rest of its queue. So
    // the group's taints reach their nodes within 10 writes of the
    // reservation, whatever the pods' Events cost at the client's rate.
    for (std::size_t i = 0; i < group.size(); ++i) {
      Work& work = queues_[group[i]].work.front();
      work.valve_answer = std::move((*answers)[i]);
      work.pause_after_write = true;
    }
    for (const std::string& node : group) Drain(node);
    for (const std::string& node : group) Drain(node);
  }
  UpdateGauges();
}

bool Tainter::Queued(const std::string& node) const {
  auto it = queues_.find(node);
  return it != queues_.end() && !it->second.work.empty();
}

void Tainter::ApplyDeferred(const std::string& node) {
  auto it = deferred_.find(node);
  if (it == deferred_.end()) return;
  std::optional<NodeInfo> info = std::move(it->second);
  deferred_.erase(it);
  if (info) {
    ObserveNode(*info);
  } else {
    ObserveDeleted(node);
  }
}

void Tainter::ObserveNode(const NodeInfo& node) {
  if (Queued(node.name)) {
    deferred_[node.name] = node;
    return;
  }
  AdoptNode(node, /*merge_memory=*/true);
  if (!options_.dry_run) pictures_.Keep(node);  // a dry run's API keeps its own picture
  ReconcileConditions(node);
}

void Tainter::ObserveDeleted(const std::string& node) {
  if (Queued(node)) {
    deferred_[node] = std::nullopt;
    return;
  }
  policy_.ForgetNode(node);
  node_uids_.erase(node);
  observed_at_.erase(node);
  pictures_.Drop(node);
}

void Tainter::Observe(std::vector<NodeWatchChange> changes) {
  // A node seen again later in the batch is judged by its last picture only:
  // our own taint comes back as two (the node patch, then the status patch),
  // and the first one's conditions, stale by then, would cost a GET.
  std::map<std::string_view, std::size_t> last;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (changes[i].kind != NodeWatchChange::Kind::kList && !changes[i].objects.empty()) {
      last[changes[i].objects[0].name] = i;
    }
  }
  for (std::size_t i = 0; i < changes.size(); ++i) {
    NodeWatchChange& c = changes[i];
    if (c.kind == NodeWatchChange::Kind::kUpsert && !c.objects.empty() &&
        last[c.objects[0].name] != i) {
      continue;
    }
    switch (c.kind) {
      case NodeWatchChange::Kind::kList: {
        std::set<std::string> listed;
        for (const NodeInfo& n : c.objects) {
          listed.insert(n.name);
          ObserveNode(n);
        }
        for (const std::string& name : policy_.Nodes()) {
          if (listed.count(name) == 0) ObserveDeleted(name);
        }
        MarkAdopted();
        break;
      }
      case NodeWatchChange::Kind::kUpsert:
        if (!c.objects.empty()) ObserveNode(c.objects[0]);
        break;
      case NodeWatchChange::Kind::kDeleted:
        if (!c.objects.empty()) ObserveDeleted(c.objects[0].name);
        break;
    }
  }
  UpdateGauges();
}

void Tainter::Tick() {
  const auto now = clock_.MonotonicNow();
  if (!watched_ && (!adopted_ || now >= next_resync_)) {
    if (Status s = AdoptAll(); !s.ok()) {
      next_resync_ = now + std::chrono::seconds(5);
      LogWarning("tainter", "cannot list nodes", {{"error", s.ToString()}});
    }
  }
  for (Decision& d : policy_.Expire(owns_)) {
    Work work;
    work.decided = true;
    work.decision = std::move(d);
    const std::string node = work.decision.node;
    Enqueue(node, std::move(work));
  }
  RetryParked();
  TellWaitingPods();
  std::vector<std::string> ready;
  for (const auto& [node, q] : queues_) {
    if (!q.work.empty() && (q.attempts == 0 || now >= q.next_try)) ready.push_back(node);
  }
  for (const std::string& node : ready) Drain(node);
  UpdateGauges();
}

Status Tainter::Untaint(const std::string& node, const std::string& why) {
  Result<NodeInfo> info = api_.nodes.GetNode(node);
  FL_RETURN_IF_ERROR(info.status());
  node_uids_[node] = info->uid;
  const bool has_annotation = info->annotations.count(options_.annotation_key) != 0;
  if (!HasOurTaint(*info) && !has_annotation) {
    return FailedPreconditionError("node " + node + " carries no faultline taint (" +
                                   options_.taint.key + ":" + options_.taint.effect + ")");
  }
  NodeChange change;
  change.remove_taint = options_.taint;
  change.annotations[options_.annotation_key] = std::nullopt;
  change.labels[std::string(kNeedsInspectionLabel)] = std::nullopt;  // a person judged the node
  // Recorded in the node's history (a `faultline-tainter untaint` process
  // knows only what the node says), with one FaultlineRecovered per reason.
  std::vector<Recovery> lifted;
  if (auto a = info->annotations.find(options_.annotation_key); a != info->annotations.end()) {
    if (auto rs = DecodeReasons(a->second); rs) {
      for (const Reason& r : *rs) {
        lifted.push_back({r.rule,
                          "hand",
                          why.empty() ? "no reason given" : why,
                          clock_.Now(),
                          r.first_seen,
                          r.last_seen,
                          {},
                          false});
      }
    }
  }
  std::vector<Recovery> history;
  if (auto h = info->annotations.find(options_.history_annotation_key);
      h != info->annotations.end()) {
    history = DecodeRecoveries(h->second);
  }
  for (const Recovery& r : lifted) AppendRecovery(history, r);
  if (!lifted.empty()) {
    change.annotations[options_.history_annotation_key] = EncodeRecoveries(history);
  }
  FL_RETURN_IF_ERROR(Update(node, change));
  policy_.Untaint(node);
  policy_.SetHistory(node, history);
  if (Status s = SyncConditions(node); !s.ok()) {
    LogWarning("tainter", "could not set node conditions back to False",
               {{"node", node}, {"error", s.message()}});
  }
  m_.TaintsLifted("by_hand").Inc();
  LogInfo("tainter", "taint lifted by hand", {{"node", node}, {"why", why}});
  UpdateGauges();
  for (const Recovery& r : lifted) {
    FL_RETURN_IF_ERROR(Event(node, {"Normal", "FaultlineRecovered", RecoveredMessage(r)}));
  }
  return Event(node, {"Normal", "FaultlineUntainted",
                      TruncateUtf8("faultline's taint lifted by hand: " +
                                       (why.empty() ? "no reason given" : why),
                                   kMaxEventMessageBytes)});
}

void Tainter::DropPendingFor(const std::function<bool(const std::string& node)>& pred) {
  std::erase_if(parked_, [&](const Work& w) { return pred(w.event.node); });
  for (auto it = queues_.begin(); it != queues_.end();) {
    if (pred(it->first)) {
      pending_ -= it->second.work.size();
      deferred_.erase(it->first);
      it = queues_.erase(it);
    } else {
      ++it;
    }
  }
  UpdateGauges();
}

std::size_t Tainter::pending() const { return pending_; }

// The first complete picture of the nodes (a list, or the watch's first
// list) ends adoption; said once in the log.
void Tainter::MarkAdopted() {
  if (!adopted_) {
    LogInfo("tainter", "adopted node state",
            {{"managed_nodes", policy_.managed_nodes()},
             {"tainted_nodes", policy_.tainted_nodes()},
             {"selector", selector_.text()}});
  }
  adopted_ = true;
}

void Tainter::UpdateGauges() {
  m_.pending_work.Set(static_cast<double>(pending_));
  m_.tainted_nodes.Set(policy_.tainted_nodes());
  m_.managed_nodes.Set(policy_.managed_nodes());
}

}  // namespace faultline
