// SPDX-License-Identifier: Apache-2.0
#include "tainter/tainter.h"

#include <algorithm>

#include "base/fault_event.h"
#include "base/log.h"
#include "base/time_format.h"

namespace faultline {
namespace {

constexpr std::size_t kMaxEventMessageBytes = 1024;

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                            0.5,   1,    2.5,   5,    10};

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

std::string EventMessage(const Reason& reason, std::string_view prefix) {
  std::string text(prefix);
  text += reason.rule;
  if (!reason.summary.empty()) text += ": " + reason.summary;
  if (!reason.message.empty()) text += ": " + reason.message;
  return TruncateUtf8(text, kMaxEventMessageBytes);
}

Result<std::unique_ptr<Tainter>> Tainter::Create(Options options, NodeApi& api,
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
                                              std::move(*opt_out), api, metrics, clock));
}

Tainter::Tainter(Options options, LabelSelector selector, LabelMatch opt_out, NodeApi& api,
                 MetricsRegistry& metrics, const Clock& clock)
    : options_(std::move(options)),
      selector_(std::move(selector)),
      opt_out_(std::move(opt_out)),
      api_(api),
      metrics_(metrics),
      clock_(clock),
      policy_(options_.policy, clock) {
  UpdateGauges();
}

Tainter::~Tainter() = default;

bool Tainter::HasOurTaint(const NodeInfo& node) const {
  return std::any_of(node.taints.begin(), node.taints.end(),
                     [&](const NodeTaint& t) { return t.SameAs(options_.taint); });
}

Status Tainter::Track(std::string_view op, Status s, std::chrono::steady_clock::time_point start) {
  const std::chrono::duration<double> took = clock_.MonotonicNow() - start;
  metrics_
      .GetHistogram("faultline_tainter_api_request_seconds", "Kubernetes API calls by operation",
                    kLatencyBounds, {{"op", std::string(op)}})
      .Observe(took.count());
  if (!s.ok()) {
    metrics_
        .GetCounter("faultline_tainter_api_errors_total",
                    "Kubernetes API errors by operation and code",
                    {{"op", std::string(op)}, {"code", StatusCodeName(s.code())}})
        .Inc();
  }
  api_reachable_ =
      s.ok() || (s.code() != StatusCode::kUnavailable && s.code() != StatusCode::kUnauthenticated &&
                 s.code() != StatusCode::kDeadlineExceeded);
  return s;
}

void Tainter::AdoptNode(const NodeInfo& node, bool merge_memory) {
  const bool managed = selector_.Matches(node.labels);
  policy_.SetNode(node.name, managed, opt_out_.Matches(node.labels));
  node_uids_[node.name] = node.uid;
  const bool tainted = HasOurTaint(node);
  std::vector<Reason> reasons;
  if (auto a = node.annotations.find(options_.annotation_key); a != node.annotations.end()) {
    Result<std::vector<Reason>> decoded = DecodeReasons(a->second);
    if (decoded) {
      reasons = std::move(*decoded);
    } else {
      metrics_
          .GetCounter("faultline_tainter_bad_annotations_total",
                      "reasons annotations that could not be read (the taint is adopted as is)")
          .Inc();
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
        if (mine.rule != Reason::kAdoptedRule || reasons.empty())
          reasons.push_back(std::move(mine));
      } else if (mine.last_seen > it->last_seen) {
        *it = std::move(mine);
      }
    }
  }
  policy_.Adopt(node.name, tainted, std::move(reasons));
}

Status Tainter::AdoptAll() {
  const auto start = clock_.MonotonicNow();
  Result<std::vector<NodeInfo>> nodes = api_.ListNodes(selector_.text());
  FL_RETURN_IF_ERROR(Track("list", nodes.status(), start));
  for (const NodeInfo& n : *nodes) {
    if (auto q = queues_.find(n.name); q != queues_.end() && !q->second.work.empty()) continue;
    AdoptNode(n, /*merge_memory=*/adopted_);
  }
  if (!adopted_) {
    LogInfo("tainter", "adopted node state",
            {{"managed_nodes", policy_.managed_nodes()},
             {"tainted_nodes", policy_.tainted_nodes()},
             {"selector", selector_.text()}});
  }
  adopted_ = true;
  next_resync_ = clock_.MonotonicNow() + options_.resync_interval;
  UpdateGauges();
  return OkStatus();
}

Status Tainter::LearnNode(const std::string& node) {
  const auto start = clock_.MonotonicNow();
  Result<NodeInfo> info = api_.GetNode(node);
  FL_RETURN_IF_ERROR(Track("get", info.status(), start));
  AdoptNode(*info, /*merge_memory=*/false);
  return OkStatus();
}

void Tainter::Handle(const FaultEvent& event, Done done) {
  metrics_.GetCounter("faultline_tainter_events_total", "events handed to the policy").Inc();
  Work work;
  work.event = event;
  work.done = std::move(done);
  const std::string node = event.node;
  Enqueue(node, std::move(work));
  Drain(node);
  UpdateGauges();
}

void Tainter::Replay(const FaultEvent& event) {
  metrics_
      .GetCounter("faultline_tainter_replayed_events_total",
                  "events re-read to rebuild windows (not decided again)")
      .Inc();
  policy_.Replay(event);
}

void Tainter::Enqueue(const std::string& node, Work work) {
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
    metrics_
        .GetCounter("faultline_tainter_dropped_work_total",
                    "decisions dropped because the retry queue was full")
        .Inc();
    if (dropped) dropped();
  }
  queues_[node].work.push_back(std::move(work));
  ++pending_;
}

void Tainter::Drain(const std::string& node) {
  auto it = queues_.find(node);
  if (it == queues_.end()) return;
  NodeQueue& q = it->second;
  while (!q.work.empty()) {
    if (q.attempts > 0 && clock_.MonotonicNow() < q.next_try) return;
    if (Process(q.work.front()) == Step::kRetry) {
      ++q.attempts;
      auto backoff = options_.initial_backoff * (1LL << std::min(q.attempts - 1, 16));
      q.next_try = clock_.MonotonicNow() +
                   std::min<std::chrono::milliseconds>(backoff, options_.max_backoff);
      return;
    }
    Done done = std::move(q.work.front().done);
    q.work.pop_front();
    --pending_;
    q.attempts = 0;
    if (done) done();
  }
  queues_.erase(it);
}

Tainter::Step Tainter::Process(Work& work) {
  if (!work.decided) {
    const std::string& node = work.event.node;
    if (!policy_.Knows(node)) {
      Status s = LearnNode(node);
      if (s.code() == StatusCode::kNotFound) {
        metrics_
            .GetCounter("faultline_tainter_decisions_total", "decisions by outcome",
                        {{"outcome", "unknown_node"}})
            .Inc();
        return Step::kDone;
      }
      if (!s.ok()) return Retryable(s.code()) ? Step::kRetry : Step::kDone;
    }
    work.decision = policy_.Decide(work.event);
    work.decided = true;
    work.event = FaultEvent();
    Count(work.decision);
  }
  Status s = Apply(work);
  if (s.ok()) return Step::kDone;
  if (s.code() == StatusCode::kNotFound) {
    policy_.ForgetNode(work.decision.node);
    return Step::kDone;
  }
  if (Retryable(s.code())) return Step::kRetry;
  LogError("tainter", "dropping a decision the API server refused",
           {{"node", work.decision.node},
            {"outcome", DecisionOutcomeName(work.decision.outcome)},
            {"error", s.ToString()}});
  return Step::kDone;
}

void Tainter::Count(const Decision& d) {
  metrics_
      .GetCounter("faultline_tainter_decisions_total", "decisions by outcome",
                  {{"outcome", std::string(DecisionOutcomeName(d.outcome))}})
      .Inc();
  if (d.outcome == DecisionOutcome::kRefusedByValve) {
    metrics_
        .GetCounter("faultline_tainter_taints_refused_total",
                    "would-be taints refused by the safety valve", {{"rule", d.reason.rule}})
        .Inc();
    if (d.emit_event) {  // rate-limited per node and rule, like the Event
      LogWarning("tainter", "safety valve refused a taint",
                 {{"node", d.node}, {"rule", d.reason.rule}, {"valve", d.detail}});
    }
  }
}

Status Tainter::Update(const std::string& node, const NodeChange& change, std::string_view why) {
  if (options_.dry_run) {
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : change.annotations) annotations[k] = v ? nlohmann::json(*v) : nullptr;
    nlohmann::json fields = {{"node", node}, {"why", why}, {"annotations", annotations}};
    if (change.add_taint)
      fields["add_taint"] =
          change.add_taint->key + "=" + change.add_taint->value + ":" + change.add_taint->effect;
    if (change.remove_taint)
      fields["remove_taint"] = change.remove_taint->key + ":" + change.remove_taint->effect;
    LogInfo("tainter", "dry-run: would update node", fields);
    metrics_
        .GetCounter("faultline_tainter_dry_run_writes_total", "writes a dry run did not send",
                    {{"op", "update"}})
        .Inc();
    return OkStatus();
  }
  const auto start = clock_.MonotonicNow();
  return Track("update", api_.UpdateNode(node, change), start);
}

Status Tainter::Event(const std::string& node, std::string type, std::string reason,
                      std::string message) {
  NodeEvent e;
  e.node = node;
  if (auto it = node_uids_.find(node); it != node_uids_.end()) e.node_uid = it->second;
  e.type = std::move(type);
  e.reason = std::move(reason);
  e.message = std::move(message);
  if (options_.dry_run) {
    LogInfo("tainter", "dry-run: would record event",
            {{"node", node}, {"type", e.type}, {"reason", e.reason}, {"message", e.message}});
    metrics_
        .GetCounter("faultline_tainter_dry_run_writes_total", "writes a dry run did not send",
                    {{"op", "event"}})
        .Inc();
    return OkStatus();
  }
  const auto start = clock_.MonotonicNow();
  Status s = Track("event", api_.CreateEvent(e), start);
  // An Event is evidence, not state: one the server refuses for good is
  // logged and dropped rather than holding the node's queue.
  if (!s.ok() && !Retryable(s.code()) && s.code() != StatusCode::kNotFound) {
    LogWarning("tainter", "event refused", {{"node", node}, {"error", s.ToString()}});
    return OkStatus();
  }
  return s;
}

Status Tainter::Apply(Work& work) {
  const Decision& d = work.decision;
  const std::string& node = d.node;
  switch (d.outcome) {
    case DecisionOutcome::kTaint: {
      if (!work.update_done) {
        NodeChange change;
        change.add_taint = options_.taint;
        std::size_t dropped = 0;
        change.annotations[options_.annotation_key] =
            EncodeReasons(policy_.ActiveReasons(node), options_.max_annotation_bytes, &dropped);
        FL_RETURN_IF_ERROR(Update(node, change, "taint"));
        work.update_done = true;
        policy_.MarkPersisted(node);
        metrics_.GetCounter("faultline_tainter_taints_added_total", "taints faultline added").Inc();
        LogInfo("tainter", options_.dry_run ? "would taint node" : "tainted node",
                {{"node", node}, {"rule", d.reason.rule}, {"event_id", d.event_id}});
      }
      return Event(node, "Warning", "FaultlineTainted", EventMessage(d.reason));
    }
    case DecisionOutcome::kUpdateReasons: {
      if (d.write_reasons && !work.update_done && policy_.IsTainted(node)) {
        NodeChange change;
        // Reasons are written together with the taint they justify: if an
        // operator lifted the taint by hand since our last resync, a new
        // fault puts it back (the add is a no-op while the taint is there).
        change.add_taint = options_.taint;
        change.annotations[options_.annotation_key] =
            EncodeReasons(policy_.ActiveReasons(node), options_.max_annotation_bytes);
        FL_RETURN_IF_ERROR(Update(node, change, "reasons"));
        policy_.MarkPersisted(node);
      }
      work.update_done = true;
      if (d.emit_event && !d.reason.rule.empty()) {
        return Event(node, "Warning", "FaultlineFault", EventMessage(d.reason, "also faulty: "));
      }
      return OkStatus();
    }
    case DecisionOutcome::kRecordEvent:
      if (!d.emit_event) return OkStatus();
      return Event(node, "Warning", "FaultlineFault",
                   EventMessage(d.reason, d.opted_out ? "not tainted (node opted out): " : ""));
    case DecisionOutcome::kRefusedByValve:
      if (!d.emit_event) return OkStatus();
      return Event(node, "Warning", "FaultlineValveShut",
                   TruncateUtf8("would taint, but the safety valve is shut (" + d.detail +
                                    "): " + EventMessage(d.reason),
                                kMaxEventMessageBytes));
    case DecisionOutcome::kLift:
      return ApplyLift(work);
    default:
      return OkStatus();
  }
}

Status Tainter::ApplyLift(Work& work) {
  const std::string& node = work.decision.node;
  if (!work.update_done) {
    if (policy_.IsTainted(node)) return OkStatus();  // tainted again since: nothing to lift
    // Re-read the node: another replica may have extended a reason since
    // this one last looked. Its live reasons win over our lift.
    const auto start = clock_.MonotonicNow();
    Result<NodeInfo> info = api_.GetNode(node);
    FL_RETURN_IF_ERROR(Track("get", info.status(), start));
    if (!HasOurTaint(*info)) return OkStatus();
    if (auto a = info->annotations.find(options_.annotation_key); a != info->annotations.end()) {
      if (Result<std::vector<Reason>> rs = DecodeReasons(a->second); rs) {
        const auto now = clock_.Now();
        std::erase_if(*rs, [&](const Reason& r) { return r.expires_at && *r.expires_at <= now; });
        if (!rs->empty()) {
          policy_.Adopt(node, true, std::move(*rs));
          return OkStatus();
        }
      }
    }
    NodeChange change;
    change.remove_taint = options_.taint;
    change.annotations[options_.annotation_key] = std::nullopt;
    FL_RETURN_IF_ERROR(Update(node, change, "lift"));
    work.update_done = true;
    metrics_
        .GetCounter("faultline_tainter_taints_lifted_total", "taints faultline lifted",
                    {{"why", "expired"}})
        .Inc();
    LogInfo("tainter", options_.dry_run ? "would lift taint" : "lifted taint",
            {{"node", node}, {"why", "every reason expired"}});
  }
  return Event(node, "Normal", "FaultlineUntainted",
               "faultline lifted its taint: every reason expired");
}

void Tainter::Tick() {
  const auto now = clock_.MonotonicNow();
  if (!adopted_ || now >= next_resync_) {
    if (Status s = AdoptAll(); !s.ok()) {
      next_resync_ = now + std::chrono::seconds(5);
      LogWarning("tainter", "cannot list nodes", {{"error", s.ToString()}});
    }
  }
  for (Decision& d : policy_.Expire()) {
    Work work;
    work.decided = true;
    work.decision = std::move(d);
    const std::string node = work.decision.node;
    Enqueue(node, std::move(work));
  }
  std::vector<std::string> ready;
  for (const auto& [node, q] : queues_) {
    if (!q.work.empty() && (q.attempts == 0 || now >= q.next_try)) ready.push_back(node);
  }
  for (const std::string& node : ready) Drain(node);
  UpdateGauges();
}

Status Tainter::Untaint(const std::string& node, const std::string& why) {
  auto start = clock_.MonotonicNow();
  Result<NodeInfo> info = api_.GetNode(node);
  FL_RETURN_IF_ERROR(Track("get", info.status(), start));
  node_uids_[node] = info->uid;
  const bool has_annotation = info->annotations.count(options_.annotation_key) != 0;
  if (!HasOurTaint(*info) && !has_annotation) {
    return FailedPreconditionError("node " + node + " carries no faultline taint (" +
                                   options_.taint.key + ":" + options_.taint.effect + ")");
  }
  NodeChange change;
  change.remove_taint = options_.taint;
  change.annotations[options_.annotation_key] = std::nullopt;
  FL_RETURN_IF_ERROR(Update(node, change, "untaint"));
  policy_.Untaint(node);
  metrics_
      .GetCounter("faultline_tainter_taints_lifted_total", "taints faultline lifted",
                  {{"why", "by_hand"}})
      .Inc();
  LogInfo("tainter", "taint lifted by hand", {{"node", node}, {"why", why}});
  UpdateGauges();
  return Event(
      node, "Normal", "FaultlineUntainted",
      TruncateUtf8("faultline's taint lifted by hand: " + (why.empty() ? "no reason given" : why),
                   kMaxEventMessageBytes));
}

TaintedNodeReport Tainter::ReportFor(const NodeInfo& n) const {
  TaintedNodeReport report;
  report.node = n.name;
  report.tainted = HasOurTaint(n);
  if (auto a = n.annotations.find(options_.annotation_key); a != n.annotations.end()) {
    if (auto rs = DecodeReasons(a->second); rs) report.reasons = std::move(*rs);
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

Result<std::vector<TaintedNodeReport>> Tainter::ListTainted() {
  const auto start = clock_.MonotonicNow();
  Result<std::vector<NodeInfo>> nodes = api_.ListNodes("");
  FL_RETURN_IF_ERROR(Track("list", nodes.status(), start));
  std::vector<TaintedNodeReport> out;
  for (const NodeInfo& n : *nodes) {
    if (HasOurTaint(n)) out.push_back(ReportFor(n));
  }
  return out;
}

Result<TaintedNodeReport> Tainter::Explain(const std::string& node) {
  const auto start = clock_.MonotonicNow();
  Result<NodeInfo> info = api_.GetNode(node);
  FL_RETURN_IF_ERROR(Track("get", info.status(), start));
  return ReportFor(*info);
}

void Tainter::DropPendingFor(const std::function<bool(const std::string& node)>& pred) {
  for (auto it = queues_.begin(); it != queues_.end();) {
    if (pred(it->first)) {
      pending_ -= it->second.work.size();
      it = queues_.erase(it);
    } else {
      ++it;
    }
  }
  UpdateGauges();
}

std::size_t Tainter::pending() const { return pending_; }

void Tainter::UpdateGauges() {
  metrics_.GetGauge("faultline_tainter_pending_work", "decisions waiting to be applied")
      .Set(static_cast<double>(pending_));
  metrics_.GetGauge("faultline_tainter_tainted_nodes", "managed nodes carrying faultline's taint")
      .Set(policy_.tainted_nodes());
  metrics_.GetGauge("faultline_tainter_managed_nodes", "nodes matching the node selector")
      .Set(policy_.managed_nodes());
}

}  // namespace faultline
