// SPDX-License-Identifier: Apache-2.0
#include "tainter/remediation/remediation.h"

#include <algorithm>

#include "base/log.h"
#include "base/time_format.h"

namespace faultline {
namespace {

constexpr char kComponent[] = "remediation";
constexpr char kRunning[] = "running";
constexpr char kDone[] = "done";
constexpr char kTimedOut[] = "timed-out";
constexpr std::size_t kPodsNamed = 5;  // in the report of a drain that timed out

}  // namespace

std::string_view RemediationActionName(RemediationAction a) {
  switch (a) {
    case RemediationAction::kTaint:
      return "taint";
    case RemediationAction::kCordon:
      return "cordon";
    case RemediationAction::kDrain:
      return "drain";
  }
  return "?";
}

std::optional<RemediationAction> ParseRemediationAction(std::string_view text) {
  if (text == "taint") return RemediationAction::kTaint;
  if (text == "cordon") return RemediationAction::kCordon;
  if (text == "drain") return RemediationAction::kDrain;
  return std::nullopt;
}

RemediationAction RemediationOptions::For(const std::string& rule,
                                          const std::string& category) const {
  if (auto r = by_rule.find(rule); r != by_rule.end()) return r->second;
  if (auto c = by_category.find(category); c != by_category.end()) return c->second;
  return action;
}

bool RemediationOptions::Active() const {
  auto beyond = [](const auto& m) {
    return std::any_of(m.begin(), m.end(),
                       [](const auto& kv) { return kv.second != RemediationAction::kTaint; });
  };
  return action != RemediationAction::kTaint || beyond(by_rule) || beyond(by_category);
}

Remediator::Remediator(RemediationOptions options, View view, EvictionApi& evictions,
                       NodeApi& nodes, EventApi& events, MetricsRegistry& metrics,
                       const Clock& clock)
    : options_(std::move(options)),
      view_(std::move(view)),
      evictions_(evictions),
      nodes_api_(nodes),
      events_api_(events),
      metrics_(metrics),
      clock_(clock) {}

RemediationAction Remediator::Wanted(const std::string& node) const {
  RemediationAction want = RemediationAction::kTaint;
  for (const Reason& r : view_.reasons(node)) {
    const std::string category = view_.category ? view_.category(r.rule) : std::string();
    want = std::max(want, options_.For(r.rule, category));
  }
  return want;
}

bool Remediator::Cordoned(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.ours;
}

bool Remediator::Drained(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.drained;
}

int Remediator::active_drains() const {
  return static_cast<int>(std::count_if(nodes_.begin(), nodes_.end(),
                                        [](const auto& kv) { return kv.second.draining; }));
}

void Remediator::NodeEventNow(const std::string& node, const std::string& reason,
                              const std::string& msg, const std::string& type) {
  if (options_.dry_run) return;
  NodeEvent e;
  e.node = node;
  e.type = type;
  e.reason = reason;
  e.message = msg;
  if (Status s = events_api_.CreateEvent(e); !s.ok()) {
    LogWarning(kComponent, "event not recorded", {{"node", node}, {"error", s.message()}});
  }
}

void Remediator::Failed(const std::string& node, NodeState& s, const Status& why) {
  ++s.failures;
  const auto delay = std::min<std::chrono::milliseconds>(
      options_.api_backoff * (1LL << std::min(s.failures - 1, 10)), options_.max_retry_interval);
  s.next_try = clock_.MonotonicNow() + delay;
  metrics_.Errors(std::string(StatusCodeName(why.code()))).Inc();
  LogWarning(
      kComponent, "remediation step failed; retrying",
      {{"node", node},
       {"error", why.message()},
       {"retry_in_ms", std::chrono::duration_cast<std::chrono::milliseconds>(delay).count()}});
}

Status Remediator::Relist() {
  Result<std::vector<NodeInfo>> nodes = nodes_api_.ListNodes("");
  if (!nodes) return nodes.error();
  marked_.clear();
  for (const NodeInfo& n : *nodes) {
    if (n.annotations.count(options_.cordoned_annotation) ||
        n.annotations.count(options_.drain_annotation)) {
      marked_.insert(n.name);
    }
  }
  listed_ = true;
  next_list_ = clock_.MonotonicNow() + options_.relist_interval;
  return OkStatus();
}

Status Remediator::Cordon(const std::string& node, NodeState& s) {
  Result<NodeScheduling> live = evictions_.GetScheduling(node);
  if (!live) return live.error();
  if (live->annotations.count(options_.cordoned_annotation)) {
    s.ours = true;  // ours from before (a restart, or another replica)
  } else if (live->unschedulable) {
    // Someone else cordoned it (an operator, an upgrade): leave their
    // cordon alone and do not claim it, so lifting our fault keeps it.
    s.ours = false;
    metrics_.found_cordoned.Inc();
    LogInfo(kComponent, "node already cordoned by someone else; faultline will not uncordon it",
            {{"node", node}});
  } else {
    if (options_.dry_run) {
      LogInfo(kComponent, "dry-run: would cordon node", {{"node", node}});
    } else {
      SchedulingChange change;
      change.expected_resource_version = live->resource_version;
      change.unschedulable = true;
      change.annotations[options_.cordoned_annotation] = FormatRfc3339(clock_.Now());
      FL_RETURN_IF_ERROR(evictions_.PatchScheduling(node, change));
      marked_.insert(node);
    }
    s.ours = true;
    metrics_.cordoned.Inc();
    LogInfo(kComponent, options_.dry_run ? "would cordon" : "cordoned node", {{"node", node}});
    NodeEventNow(node, "FaultlineCordoned",
                 "faultline cordoned the node (spec.unschedulable); it uncordons it when the "
                 "fault is lifted");
  }
  if (auto d = live->annotations.find(options_.drain_annotation); d != live->annotations.end()) {
    s.draining = d->second == kRunning;  // a drain this node already holds a slot for
    s.drained = d->second == kDone;
    s.timed_out = d->second == kTimedOut;  // given up before (a restart): still a person's
    if (s.draining) s.drain_started = DrainStartedAt(*live);
  }
  s.cordon_checked = true;
  return OkStatus();
}

Status Remediator::StartDrain(const std::string& node, NodeState& s, bool* started) {
  *started = false;
  // Cluster-wide: every replica marks its drains on the node, so the list
  // counts them all (two replicas starting in the same instant can both
  // pass: the bound is then exceeded by at most the replica count - 1).
  const auto now = clock_.MonotonicNow();
  if (!running_elsewhere_ || now >= running_read_at_ + options_.retry_interval) {
    Result<std::vector<NodeInfo>> all = nodes_api_.ListNodes("");
    if (!all) return all.error();
    int count = 0;
    for (const NodeInfo& n : *all) {
      if (nodes_.count(n.name) && nodes_.at(n.name).draining) continue;  // ours: counted below
      auto a = n.annotations.find(options_.drain_annotation);
      if (a != n.annotations.end() && a->second == kRunning) ++count;
    }
    running_elsewhere_ = count;
    running_read_at_ = now;
  }
  const int running = *running_elsewhere_ + active_drains();
  metrics_.drains_running.Set(running);
  if (running >= options_.max_concurrent_drains) {
    metrics_.drains_waiting.Inc();
    return OkStatus();
  }
  if (!options_.dry_run) {
    FL_RETURN_IF_ERROR(SetDrainMark(node, kRunning));
    marked_.insert(node);
  }
  s.draining = true;
  s.drain_started = now;
  *started = true;
  metrics_.drains_started.Inc();
  LogInfo(kComponent, options_.dry_run ? "dry-run: would drain node" : "draining node",
          {{"node", node}});
  return OkStatus();
}

std::string Remediator::StartedAnnotation() const { return options_.drain_annotation + "-started"; }

std::chrono::steady_clock::time_point Remediator::DrainStartedAt(const NodeScheduling& node) const {
  const auto now = clock_.MonotonicNow();
  auto a = node.annotations.find(StartedAnnotation());
  if (a == node.annotations.end()) return now;  // marked by a version without the record
  std::optional<std::chrono::system_clock::time_point> started = ParseRfc3339(a->second);
  const auto wall = clock_.Now();
  if (!started || *started > wall) return now;  // unreadable, or a clock ahead of ours
  return now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(wall - *started);
}

Status Remediator::SetDrainMark(const std::string& node, std::optional<std::string> mark) {
  Result<NodeScheduling> live = evictions_.GetScheduling(node);
  if (!live) return live.error();
  SchedulingChange change;
  change.expected_resource_version = live->resource_version;
  // When the drain started, in wall time on the node: a restarted tainter
  // (or another replica) keeps counting the deadline from there.
  change.annotations[StartedAnnotation()] =
      mark == kRunning ? std::optional<std::string>(FormatRfc3339(clock_.Now())) : std::nullopt;
  change.annotations[options_.drain_annotation] = std::move(mark);
  return evictions_.PatchScheduling(node, change);
}

Status Remediator::StopDrain(const std::string& node, NodeState& s) {
  if (!options_.dry_run) FL_RETURN_IF_ERROR(SetDrainMark(node, std::nullopt));
  s.draining = false;
  LogInfo(kComponent, "drain stopped: no active reason asks for it any more", {{"node", node}});
  return OkStatus();
}

Status Remediator::DrainStep(const std::string& node, NodeState& s) {
  Result<std::vector<PodInfo>> pods = evictions_.ListPodsOnNode(node);
  if (!pods) return pods.error();
  const auto now = clock_.MonotonicNow();
  int left = 0;
  s.waiting_for.clear();
  for (const PodInfo& pod : *pods) {
    const PodDrainClass c = ClassifyForDrain(pod);
    if (c == PodDrainClass::kSkipDaemonSet || c == PodDrainClass::kSkipMirror ||
        c == PodDrainClass::kSkipFinished) {
      continue;
    }
    const std::string key = pod.namespace_name + "/" + pod.name;
    if (options_.dry_run) {
      LogInfo(kComponent, "dry-run: would evict pod", {{"node", node}, {"pod", key}});
      continue;
    }
    ++left;
    if (static_cast<std::size_t>(left) <= kPodsNamed) {
      s.waiting_for += (s.waiting_for.empty() ? "" : ", ") + key +
                       (c == PodDrainClass::kLeaving ? " (terminating)" : "");
    } else if (static_cast<std::size_t>(left) == kPodsNamed + 1) {
      s.waiting_for += ", ...";
    }
    if (c == PodDrainClass::kLeaving || !s.pods.Due(key, now)) continue;
    Result<EvictionOutcome> out =
        evictions_.Evict(pod.namespace_name, pod.name, options_.grace_period);
    std::string outcome;
    if (!out) {
      outcome = "error";
      s.pods.Refused(key, now);
      LogWarning(kComponent, "eviction failed; retrying later",
                 {{"node", node}, {"pod", key}, {"error", out.error().message()}});
    } else if (*out == EvictionOutcome::kBlockedByBudget) {
      outcome = "blocked_by_budget";
      s.pods.Refused(key, now);
      LogInfo(kComponent, "eviction refused by a PodDisruptionBudget; retrying later",
              {{"node", node}, {"pod", key}, {"refusals", s.pods.refusals(key)}});
    } else {
      outcome = *out == EvictionOutcome::kGone ? "gone" : "evicted";
      s.pods.Forget(key);
      if (*out == EvictionOutcome::kEvicted) {
        LogInfo(kComponent, "evicted pod", {{"node", node}, {"pod", key}});
      }
    }
    metrics_.Evictions(outcome).Inc();
  }
  if (left > 0) return OkStatus();
  if (!options_.dry_run) FL_RETURN_IF_ERROR(SetDrainMark(node, kDone));
  s.draining = false;
  s.drained = true;
  metrics_.drains_completed.Inc();
  LogInfo(kComponent, options_.dry_run ? "dry-run: drain would be complete" : "node drained",
          {{"node", node}});
  NodeEventNow(node, "FaultlineDrained",
               "faultline evicted the node's pods (DaemonSet, mirror and finished pods stay)");
  return OkStatus();
}

Status Remediator::TimeOut(const std::string& node, NodeState& s) {
  if (!options_.dry_run) FL_RETURN_IF_ERROR(SetDrainMark(node, kTimedOut));
  s.draining = false;
  s.timed_out = true;
  metrics_.drains_timed_out.Inc();
  const std::string why = "drain did not finish within " + FormatDuration(options_.drain_deadline) +
                          "; still waiting for " +
                          (s.waiting_for.empty() ? std::string("its pods") : s.waiting_for) +
                          ". The node stays cordoned and tainted and needs a person";
  LogWarning(kComponent,
             options_.dry_run ? "dry-run: drain would have timed out; the node needs a person"
                              : "drain timed out; the node needs a person (its slot is free)",
             {{"node", node}, {"waiting_for", s.waiting_for}});
  NodeEventNow(node, "FaultlineDrainTimedOut", "faultline gave up draining the node: " + why,
               "Warning");
  if (needs_person_) needs_person_(node, why);
  return OkStatus();
}

Status Remediator::Lift(const std::string& node) {
  Result<NodeScheduling> live = evictions_.GetScheduling(node);
  if (!live) return live.error();
  const bool ours = live->annotations.count(options_.cordoned_annotation) != 0;
  const bool mark = live->annotations.count(options_.drain_annotation) != 0;
  if (!ours && !mark) return OkStatus();
  if (options_.dry_run) {
    LogInfo(kComponent, "dry-run: would uncordon node", {{"node", node}});
    return OkStatus();
  }
  SchedulingChange change;
  change.expected_resource_version = live->resource_version;
  if (ours) change.unschedulable = false;  // only a cordon faultline made
  change.annotations[options_.cordoned_annotation] = std::nullopt;
  change.annotations[options_.drain_annotation] = std::nullopt;
  change.annotations[StartedAnnotation()] = std::nullopt;
  FL_RETURN_IF_ERROR(evictions_.PatchScheduling(node, change));
  if (ours) {
    metrics_.uncordoned.Inc();
    LogInfo(kComponent, "uncordoned node (faultline's fault lifted)", {{"node", node}});
    NodeEventNow(node, "FaultlineUncordoned",
                 "faultline uncordoned the node: the fault it cordoned it for was lifted");
  }
  return OkStatus();
}

void Remediator::Tick() {
  if (view_.ready && !view_.ready()) return;
  const auto now = clock_.MonotonicNow();
  if (!listed_ || now >= next_list_) {
    if (Status s = Relist(); !s.ok()) {
      LogWarning(kComponent, "cannot list nodes; retrying", {{"error", s.message()}});
      next_list_ = now + options_.api_backoff;
      if (!listed_) return;
    }
  }
  auto owns = [&](const std::string& node) { return !view_.owns || view_.owns(node); };
  for (const std::string& node : view_.tainted_nodes()) {
    if (!owns(node)) continue;
    const RemediationAction want = Wanted(node);
    if (want == RemediationAction::kTaint) continue;
    auto it = nodes_.find(node);
    if (it == nodes_.end()) it = nodes_.emplace(node, NodeState(options_)).first;
    it->second.want = want;
  }
  // Lift: a node none of whose active reasons asks for more than the taint
  // any more (expired, untainted by hand, lifted) gives back what faultline
  // took; one faultline no longer taints has no reasons at all.
  std::set<std::string> lift;
  for (const auto& [node, s] : nodes_) {
    if (Wanted(node) == RemediationAction::kTaint) lift.insert(node);
  }
  for (const std::string& node : marked_) {
    if (Wanted(node) == RemediationAction::kTaint) lift.insert(node);
  }
  for (const std::string& node : lift) {
    if (!owns(node)) continue;
    if (auto r = lift_retry_.find(node); r != lift_retry_.end() && now < r->second) continue;
    Status s = Lift(node);
    if (!s.ok() && s.code() != StatusCode::kNotFound) {
      lift_retry_[node] = now + options_.api_backoff;
      LogWarning(kComponent, "uncordon failed; retrying", {{"node", node}, {"error", s.message()}});
      continue;
    }
    lift_retry_.erase(node);
    nodes_.erase(node);
    marked_.erase(node);
  }
  int draining = active_drains();
  for (auto& [node, s] : nodes_) {
    if (now < s.next_try) continue;
    const bool was_draining = s.draining;
    Status st = OkStatus();
    if (!s.cordon_checked) st = Cordon(node, s);
    if (st.ok() && s.draining && s.want != RemediationAction::kDrain) st = StopDrain(node, s);
    if (st.ok() && s.cordon_checked && s.want == RemediationAction::kDrain && !s.drained &&
        !s.timed_out) {
      if (!s.draining) {
        bool started = false;
        if (draining < options_.max_concurrent_drains) st = StartDrain(node, s, &started);
        if (started) ++draining;
      }
      if (st.ok() && s.draining) st = DrainStep(node, s);
      if (st.ok() && s.draining && now >= s.drain_started + options_.drain_deadline) {
        st = TimeOut(node, s);
      }
    }
    if (was_draining && !s.draining) --draining;  // done: its slot is free for the next
    if (st.ok()) {
      s.failures = 0;
    } else if (st.code() == StatusCode::kNotFound) {
      s.next_try = now + options_.relist_interval;  // the node is gone; the list forgets it
    } else {
      Failed(node, s, st);
    }
  }
  metrics_.drains_active.Set(active_drains());
}

}  // namespace faultline
