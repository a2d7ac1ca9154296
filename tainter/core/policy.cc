// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/policy.h"

#include <algorithm>

#include "base/fault_event.h"
#include "base/reused_lines.h"
#include "base/time_format.h"
#include "tainter/core/conditions.h"

namespace faultline {
namespace {

// A new member of Reason, Decision or NodePlan must be cleared below (else a
// decision written into a kept one would keep the last one's): these sizes
// say one was added.
#ifdef __GLIBCXX__  // libstdc++'s sizes
static_assert(sizeof(void*) != 8 ||
                  (sizeof(Reason) == 312 && sizeof(Decision) == 528 && sizeof(NodePlan) == 80),
              "Reason, Decision or NodePlan changed: clear the new member below, then the size");
#endif

// Every member back to its default, the strings' and lines' buffers kept
// for the next decision written into them (Policy::Decide(event, d)).
void ClearKeepingBuffers(Reason& r) {
  for (std::string* s :
       {&r.rule, &r.summary, &r.message, &r.event_id, &r.condition, &r.boot_id, &r.recover}) {
    s->clear();
  }
  r.first_seen = {};
  r.last_seen = {};
  r.expires_at.reset();
  r.probation.reset();
  r.recurring = false;
  r.reboots = 0;
  r.inspection = false;
  KeepLines(r.evidence, 0);
}

void ClearKeepingBuffers(Decision& d) {
  d.outcome = DecisionOutcome::kIgnored;
  d.node.clear();
  d.event_id.clear();
  ClearKeepingBuffers(d.reason);
  d.escalated = false;
  d.emit_event = false;
  d.event_suppressed = false;
  d.write_reasons = false;
  d.opted_out = false;
  d.detail.clear();
  d.plan.write = NodePlan::Write::kNone;
  d.plan.reasons.clear();
  d.plan.events.clear();
  d.plan.history.clear();
  d.recovered.clear();
}

}  // namespace

std::string_view DecisionOutcomeName(DecisionOutcome outcome) {
  switch (outcome) {
    case DecisionOutcome::kIgnored:
      return "ignored";
    case DecisionOutcome::kDuplicate:
      return "duplicate";
    case DecisionOutcome::kUnmanaged:
      return "unmanaged";
    case DecisionOutcome::kBelowThreshold:
      return "below_threshold";
    case DecisionOutcome::kStale:
      return "stale";
    case DecisionOutcome::kRecordEvent:
      return "record_event";
    case DecisionOutcome::kTaint:
      return "taint";
    case DecisionOutcome::kUpdateReasons:
      return "update_reasons";
    case DecisionOutcome::kRefusedByValve:
      return "refused_by_valve";
    case DecisionOutcome::kLift:
      return "lift";
  }
  return "unknown";
}

std::string EventMessage(const Reason& reason, std::string_view prefix) {
  constexpr std::size_t kMaxEventMessageBytes = 1024;
  constexpr std::string_view kBefore = "\nlines before it:";
  std::string text(prefix);
  text += reason.rule;
  if (!reason.summary.empty()) text += ": " + reason.summary;
  if (!reason.message.empty()) text += ": " + reason.message;
  text = TruncateUtf8(text, kMaxEventMessageBytes);
  // The evidence, newest lines first until the bound, shown oldest first: the
  // line just before the fault is the one a person needs most.
  std::size_t room = text.size() + kBefore.size() < kMaxEventMessageBytes
                         ? kMaxEventMessageBytes - text.size() - kBefore.size()
                         : 0;
  std::size_t from = reason.evidence.size();
  while (from > 0 && reason.evidence[from - 1].size() + 1 <= room) {
    room -= reason.evidence[from - 1].size() + 1;
    --from;
  }
  if (from == reason.evidence.size()) return text;
  text += kBefore;
  for (std::size_t i = from; i < reason.evidence.size(); ++i) text += "\n" + reason.evidence[i];
  return text;
}

void Policy::Plan(Decision& d, NodeState& state) {
  NodePlan& plan = d.plan;
  auto event = [&](std::string type, std::string reason, std::string message) {
    plan.events.push_back({std::move(type), std::move(reason), std::move(message)});
  };
  auto reasons = [&] {
    for (const auto& [rule, r] : state.reasons) plan.reasons.push_back(r);
    state.persisted_at = clock_.MonotonicNow();
  };
  switch (d.outcome) {
    case DecisionOutcome::kTaint:
      plan.write = NodePlan::Write::kTaint;
      reasons();
      event("Warning", "FaultlineTainted", EventMessage(d.reason));
      break;
    case DecisionOutcome::kUpdateReasons:
      if (d.write_reasons) {
        plan.write = NodePlan::Write::kReasons;
        reasons();
      }
      if (d.emit_event && !d.reason.rule.empty()) {
        event("Warning", "FaultlineFault", EventMessage(d.reason, "also faulty: "));
      }
      break;
    case DecisionOutcome::kRecordEvent:
      if (d.emit_event) {
        event("Warning", "FaultlineFault",
              EventMessage(d.reason, d.opted_out ? "not tainted (node opted out): " : ""));
      }
      break;
    case DecisionOutcome::kRefusedByValve:
      if (d.emit_event) {
        event("Warning", "FaultlineValveShut",
              EventMessage(d.reason,
                           "would taint, but the safety valve is shut (" + d.detail + "): "));
      }
      break;
    case DecisionOutcome::kLift: {
      plan.write = NodePlan::Write::kLift;
      const bool all_expired = std::all_of(d.recovered.begin(), d.recovered.end(),
                                           [](const Recovery& r) { return r.how == "expire"; });
      event("Normal", "FaultlineUntainted",
            all_expired ? "faultline lifted its taint: every reason expired"
                        : "faultline lifted its taint: the node returned to service");
      break;
    }
    default:
      break;
  }
  for (const Recovery& r : d.recovered) event("Normal", "FaultlineRecovered", RecoveredMessage(r));
  if (d.escalated) {
    event("Warning", "FaultlineNeedsInspection", InspectionMessage(d.reason, state.history));
  }
  if (plan.write != NodePlan::Write::kNone) {
    plan.history = state.history;
    state.history_dirty = false;
  }
}

Policy::Policy(Options options, const Clock& clock)
    : options_(options),
      clock_(clock),
      valve_(ValveLimits{options.max_fraction, options.per_rule_max_fraction, options.min_allowed,
                         options.max_new_taints, options.new_taint_window}),
      refusal_events_(options.refusal_events_per_minute / 60.0, options.refusal_events_per_minute,
                      clock) {
  // The dedupe set fills to its capacity within the first events of a busy
  // replica: buckets for it up front (up to 2^20, 8 MiB) spare the rehashes
  // of every entry on the way there.
  dedupe_index_.reserve(std::min<std::size_t>(options_.dedupe_capacity, std::size_t{1} << 20));
}

void Policy::SetNode(const std::string& node, bool managed, bool opted_out) {
  NodeState& state = nodes_[node];
  state.managed = managed;
  state.opted_out = opted_out;
}

void Policy::Adopt(const std::string& node, bool tainted, std::vector<Reason> reasons) {
  NodeState& state = nodes_[node];
  state.tainted = tainted;
  state.reasons.clear();
  if (!tainted) return;  // a taint lifted by hand takes its reasons with it
  for (Reason& r : reasons) {
    std::string rule = r.rule;
    state.reasons[rule] = std::move(r);
  }
  if (state.reasons.empty()) {
    // Our taint without our annotation: someone (or an older faultline) put
    // it there. Keep it until a person lifts it; never guess an expiry.
    Reason adopted;
    adopted.rule = std::string(Reason::kAdoptedRule);
    adopted.summary = "taint found on the node without faultline's reasons";
    adopted.first_seen = adopted.last_seen = clock_.Now();
    state.reasons[adopted.rule] = std::move(adopted);
  }
  // What we adopted is what the annotation says: no need to write it back.
  state.persisted_at = clock_.MonotonicNow();
}

void Policy::ForgetNode(const std::string& node) { nodes_.erase(node); }

void Policy::SetBootId(const std::string& node, const std::string& boot_id) {
  NodeState& state = nodes_[node];
  if (boot_id.empty() || state.boot_id == boot_id) return;
  if (!state.boot_id.empty() && state.tainted) {
    // Kept with the next write of the node (the history annotation).
    Recovery rebooted{"boot",
                      std::string(kHowRebooted),
                      "boot id " + state.boot_id + " -> " + boot_id,
                      clock_.Now(),
                      {},
                      {},
                      boot_id,
                      false};
    AppendRecovery(state.history, std::move(rebooted));
    state.history_dirty = true;
  }
  state.boot_id = boot_id;
  state.boot_seen_at = clock_.Now();
}

std::map<std::string, Waiting> Policy::Waits(const std::string& node) const {
  std::map<std::string, Waiting> out;
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return out;
  const NodeState& state = it->second;
  const Recovery* validation = LatestValidation(state.history, state.boot_id);
  for (const auto& [rule, r] : state.reasons) {
    out[rule] = WaitingFor(r, state.boot_id, validation, options_.require_validation);
  }
  return out;
}

bool Policy::NoteValidation(NodeState& state, const std::string& boot_id, bool passed,
                            std::string detail, std::chrono::system_clock::time_point at) {
  if (boot_id.empty()) return false;
  const Recovery* last = LatestValidation(state.history, boot_id);
  if (last && last->passed == passed) return false;
  Recovery v{std::string(kRoundRule),
             std::string(kHowValidation),
             std::move(detail),
             at,
             at,
             at,
             boot_id,
             passed};
  AppendRecovery(state.history, std::move(v));
  return true;
}

bool Policy::AwaitsValidation(const NodeState& state, const std::string& boot_id) {
  return std::any_of(state.reasons.begin(), state.reasons.end(), [&](const auto& kv) {
    const Reason& r = kv.second;
    return r.recover == kRecoverReboot && !r.recurring && !r.inspection && !r.boot_id.empty() &&
           !boot_id.empty() && r.boot_id != boot_id;
  });
}

bool Policy::SurvivedReboot(Reason& r) {
  ++r.reboots;
  if (r.inspection || options_.inspection_after_reboots <= 0 ||
      r.reboots < options_.inspection_after_reboots) {
    return false;
  }
  MarkInspection(r);
  return true;
}

void Policy::SetHistory(const std::string& node, const std::vector<Recovery>& history) {
  NodeState& state = nodes_[node];
  state.history = MergeRecoveries(state.history, history);
}

void Policy::NoteRecoveries(const std::string& node, const std::vector<Recovery>& lifted) {
  NodeState& state = nodes_[node];
  for (const Recovery& r : lifted) AppendRecovery(state.history, r);
}

std::vector<Recovery> Policy::History(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? std::vector<Recovery>() : it->second.history;
}

bool Policy::Remember(const std::string& id) {
  if (id.empty()) return true;  // nothing to dedupe on; decide it
  const auto now = clock_.MonotonicNow();
  if (auto it = dedupe_index_.find(id); it != dedupe_index_.end()) {
    dedupe_lru_.splice(dedupe_lru_.begin(), dedupe_lru_, it->second);
    return false;
  }
  dedupe_lru_.emplace_front(id, now);
  dedupe_index_.emplace(dedupe_lru_.front().first, dedupe_lru_.begin());
  while (dedupe_lru_.size() > options_.dedupe_capacity ||
         (!dedupe_lru_.empty() && now - dedupe_lru_.back().second > options_.dedupe_ttl)) {
    dedupe_index_.erase(dedupe_lru_.back().first);
    dedupe_lru_.pop_back();
  }
  return true;
}

std::chrono::system_clock::time_point Policy::EventTime(const FaultEvent& event) const {
  // The agent's detection time orders events across a restart (replayed
  // events are old); an unset or future one (clock skew) reads as now.
  const auto now = clock_.Now();
  if (event.detected_time.time_since_epoch().count() == 0 || event.detected_time > now) return now;
  return event.detected_time;
}

std::uint64_t Policy::CountInWindow(const FaultEvent& event,
                                    std::chrono::system_clock::time_point at) {
  std::string key = event.node;
  key += '\x1f';
  key += event.rule;
  for (const std::string& capture : event.threshold->key) {
    key += '\x1f';
    auto it = event.fields.find(capture);
    if (it != event.fields.end()) key += it->second;
  }
  auto [it, inserted] = windows_.try_emplace(key);
  Window& w = it->second;
  if (inserted) {
    window_lru_.push_front(key);
    w.lru = window_lru_.begin();
    while (windows_.size() > options_.max_windows && !window_lru_.empty()) {
      windows_.erase(window_lru_.back());  // never `key`: it is at the front
      window_lru_.pop_back();
    }
  } else {
    window_lru_.splice(window_lru_.begin(), window_lru_, w.lru);
  }
  w.span = std::min(event.threshold->window, options_.max_threshold_window);
  w.hits.emplace_back(at, 1 + event.suppressed);
  w.last_arrival = clock_.MonotonicNow();
  std::uint64_t total = 0;
  if (w.span.count() > 0) {
    std::erase_if(w.hits, [&](const auto& hit) { return hit.first <= at - w.span; });
  }
  for (const auto& hit : w.hits) total += hit.second;
  return total;
}

void Policy::AssignReason(const FaultEvent& event, std::chrono::system_clock::time_point at,
                          Reason& r) const {
  ClearKeepingBuffers(r);
  r.rule.assign(event.rule);
  r.summary.assign(event.summary);
  r.message.assign(TruncateUtf8View(event.message, kMaxReasonMessageBytes));
  AssignLines(r.evidence, event.evidence);  // already bounded by the event's reader
  r.event_id.assign(event.id);
  r.first_seen = r.last_seen = at;
  if (event.expire) r.expires_at = at + std::min(*event.expire, options_.max_expire);
  r.condition = ConditionTypeFor(event);
  r.boot_id.assign(event.boot_id);
  r.recover.assign(event.recover);
  r.probation = event.probation;
}

std::string Policy::ValveRefusal(const std::string& rule) {
  int by_rule = 0;
  for (const auto& [name, state] : nodes_) {
    if (state.managed && state.tainted && state.reasons.count(rule) != 0) ++by_rule;
  }
  return valve_.Refuse(managed_nodes(), tainted_nodes(), by_rule, rule, clock_.MonotonicNow());
}

// Events are rate-limited per node and rule, as documented. The rule's
// action and severity are part of the key, so an application Xid (event,
// error) right after a hardware one (taint, critical) of the one nvidia.xid
// rule still gets its Event. The summary is not: it may interpolate a pod's
// output, and 50 distinct NCCL WARN lines must not make 50 Events.
std::string Policy::EventKey(const FaultEvent& event) {
  // Written into one buffer: the chain of + made four strings per event.
  const std::string_view action = ActionName(event.action);
  const std::string_view severity = SeverityName(event.severity);
  std::string key;
  key.reserve(event.rule.size() + action.size() + severity.size() + 2);
  key.append(event.rule).append(1, '\x1f').append(action).append(1, '\x1f').append(severity);
  return key;
}

void Policy::RefusalEvent(Decision& d, NodeState& state, const std::string& rule) {
  d.emit_event = EventDue(state, "valve\x1f" + rule);
  // A token now or none (a wait of zero at most); 0 a minute is none at all
  // (for the bucket, qps 0 would mean no limit).
  if (!d.emit_event || (options_.refusal_events_per_minute > 0 &&
                        refusal_events_.Reserve(std::chrono::nanoseconds(0)))) {
    return;
  }
  d.emit_event = false;
  d.event_suppressed = true;
}

bool Policy::EventDue(NodeState& state, const std::string& rule) {
  const auto now = clock_.MonotonicNow();
  auto it = state.last_event.find(rule);
  if (it != state.last_event.end() && now - it->second < options_.event_interval) return false;
  state.last_event[rule] = now;
  if (state.last_event.size() > options_.max_event_keys_per_node) {
    // Bounded: forget lapsed entries, then the oldest.
    std::erase_if(state.last_event,
                  [&](const auto& kv) { return now - kv.second >= options_.event_interval; });
    while (state.last_event.size() > options_.max_event_keys_per_node) {
      state.last_event.erase(
          std::min_element(state.last_event.begin(), state.last_event.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
  }
  return true;
}

Decision Policy::Decide(const FaultEvent& event) {
  Decision d;
  DecideEvent(event, /*fresh=*/true, d);
  return d;
}

Decision Policy::Redecide(const FaultEvent& event) {
  Decision d;
  DecideEvent(event, /*fresh=*/false, d);
  return d;
}

void Policy::Decide(const FaultEvent& event, Decision& d) { DecideEvent(event, /*fresh=*/true, d); }

void Policy::Redecide(const FaultEvent& event, Decision& d) {
  DecideEvent(event, /*fresh=*/false, d);
}

// A repeat of a held reason `r`, seen at `at` as `seen`: merged into it;
// true when it was seen again in a later boot than before (the reboot did
// not cure it; `escalated` is set when that makes it one reboot too many).
bool Policy::MergeRepeat(Reason& r, const Reason& seen, std::chrono::system_clock::time_point at,
                         bool& escalated) {
  bool survived = false;
  r.first_seen = std::min(r.first_seen, at);
  if (seen.recurring && !r.recurring) {
    r.recurring = true;
    r.summary = seen.summary;
  }
  if (at >= r.last_seen) {
    r.last_seen = at;
    if (!r.recurring || seen.recurring) r.summary = seen.summary;
    r.message = seen.message;
    if (!seen.evidence.empty()) r.evidence = seen.evidence;
    r.event_id = seen.event_id;
    // The boot it was last seen in: a repeat after a reboot means the
    // reboot did not cure it.
    if (!seen.boot_id.empty() && !r.boot_id.empty() && seen.boot_id != r.boot_id) {
      survived = true;  // seen again in a later boot: written at once
      escalated = SurvivedReboot(r) || escalated;
    }
    if (!seen.boot_id.empty()) r.boot_id = seen.boot_id;
    if (!r.recurring) {
      r.recover = seen.recover;
      r.probation = seen.probation;
    }
  }
  // A repeat extends the quiet period; a version of the rule without
  // `expire` makes the reason permanent.
  if (!seen.expires_at) {
    r.expires_at.reset();
  } else if (r.expires_at) {
    r.expires_at = std::max(*r.expires_at, *seen.expires_at);
  }
  if (r.recurring || r.inspection) {
    r.expires_at.reset();
    r.recover.clear();
    r.probation.reset();
  }
  return survived;
}

void Policy::DecideEvent(const FaultEvent& event, bool fresh, Decision& d) {
  ClearKeepingBuffers(d);
  d.node.assign(event.node);
  d.event_id.assign(event.id);
  d.reason.rule.assign(event.rule);
  if (fresh && !Remember(event.id)) {
    d.outcome = DecisionOutcome::kDuplicate;
    return;
  }
  if (event.action == Action::kIgnore) {
    d.outcome = DecisionOutcome::kIgnored;
    return;
  }
  auto node_it = nodes_.find(event.node);
  if (node_it == nodes_.end() || !node_it->second.managed) {
    d.outcome = DecisionOutcome::kUnmanaged;
    return;
  }
  NodeState& state = node_it->second;
  const auto at = EventTime(event);
  AssignReason(event, at, d.reason);
  if (d.reason.boot_id.empty()) d.reason.boot_id = state.boot_id;
  if (!event.clears.empty()) {
    DecideClear(event, state, d);
    return;
  }
  if (event.rule == kRoundRule) {
    DecideRound(event, state, d);
    return;
  }

  if (fresh && event.threshold && event.threshold->count > 1) {
    const std::uint64_t count = CountInWindow(event, at);
    if (count < static_cast<std::uint64_t>(event.threshold->count)) {
      d.outcome = DecisionOutcome::kBelowThreshold;
      d.detail = std::to_string(count) + "/" + std::to_string(event.threshold->count) + " in " +
                 FormatDuration(event.threshold->window);
      return;
    }
  }
  if (d.reason.expires_at && *d.reason.expires_at <= clock_.Now()) {
    d.outcome = DecisionOutcome::kStale;
    return;
  }
  if (event.action == Action::kEvent || state.opted_out) {
    d.outcome = DecisionOutcome::kRecordEvent;
    d.opted_out = event.action == Action::kTaint;
    d.emit_event = EventDue(state, EventKey(event));
    Plan(d, state);
    return;
  }

  // action: taint. A fault soon after an automatic recovery of its rule
  // recurs: it goes to a person (tainter/core/recovery.h).
  if (const Recovery* prev =
          RecentAutoRecovery(state.history, event.rule, clock_.Now(), options_.recurring_window)) {
    MarkRecurring(d.reason, *prev);
    // Back after a reboot lift: it survived those reboots.
    if (prev->how == kRecoverReboot) {
      d.reason.reboots =
          RebootLifts(state.history, event.rule, clock_.Now(), options_.recurring_window) - 1;
      d.escalated = SurvivedReboot(d.reason);
    }
  }
  // A new fault in a boot that was to prove a reboot cured the node: the
  // validation failed (the node stays out; its condition says so).
  bool validation_failed = false;
  if (state.tainted && AwaitsValidation(state, d.reason.boot_id) &&
      state.reasons.count(event.rule) == 0) {
    validation_failed = NoteValidation(state, d.reason.boot_id, false,
                                       event.rule + ": " + d.reason.summary, clock_.Now());
  }
  if (state.tainted) {
    auto [it, inserted] = state.reasons.try_emplace(event.rule, d.reason);
    Reason& r = it->second;
    const bool moved = !inserted && at > r.last_seen;
    const bool survived = !inserted && MergeRepeat(r, d.reason, at, d.escalated);
    d.reason = r;
    d.outcome = DecisionOutcome::kUpdateReasons;
    d.emit_event = inserted && EventDue(state, event.rule);
    d.write_reasons =
        inserted || survived || d.escalated || validation_failed ||
        (moved && clock_.MonotonicNow() - state.persisted_at >= options_.persist_interval);
    if (d.escalated) {
      AppendRecovery(state.history, {r.rule, std::string(kHowInspection),
                                     "survived " + std::to_string(r.reboots) + " reboots",
                                     clock_.Now(), r.first_seen, r.last_seen, r.boot_id, false});
    }
    Plan(d, state);
    if (validation_failed) {
      d.plan.events.push_back({"Warning", "FaultlineValidationFailed",
                               EventMessage(r,
                                            "a new fault in the boot after the reboot; the "
                                            "node stays out: ")});
    }
    return;
  }
  if (std::string refusal = ValveRefusal(event.rule); !refusal.empty()) {
    d.outcome = DecisionOutcome::kRefusedByValve;
    d.detail = std::move(refusal);
    RefusalEvent(d, state, event.rule);
    Plan(d, state);
    return;
  }
  state.tainted = true;
  state.reasons[event.rule] = d.reason;
  if (d.escalated) {
    AppendRecovery(state.history,
                   {d.reason.rule, std::string(kHowInspection),
                    "survived " + std::to_string(d.reason.reboots) + " reboots", clock_.Now(),
                    d.reason.first_seen, d.reason.last_seen, d.reason.boot_id, false});
  }
  valve_.NoteNewTaint(clock_.MonotonicNow(), event.node);
  d.outcome = DecisionOutcome::kTaint;
  d.emit_event = true;
  d.write_reasons = true;
  state.last_event[EventKey(event)] = clock_.MonotonicNow();
  Plan(d, state);
}

void Policy::DecideClear(const FaultEvent& event, NodeState& state, Decision& d) {
  const auto now = clock_.Now();
  std::vector<Recovery> lifted;
  std::vector<std::string> recurring;
  if (state.tainted) {
    for (const std::string& rule : event.clears) {
      auto it = state.reasons.find(rule);
      if (it == state.reasons.end()) continue;
      const Reason& r = it->second;
      if (r.recurring) {
        recurring.push_back(rule);  // flapping: only a person lifts it
        continue;
      }
      // A fault seen after the recovery line is not cured by it.
      if (r.last_seen > d.reason.last_seen) continue;
      lifted.push_back({rule,
                        "clear",
                        event.rule + ": " + TruncateUtf8(event.message, 200),
                        now,
                        r.first_seen,
                        r.last_seen,
                        {},
                        false});
      state.reasons.erase(it);
    }
  }
  if (lifted.empty()) {
    d.outcome = DecisionOutcome::kIgnored;
    d.detail = recurring.empty() ? "clear: nothing to clear"
                                 : "clear: " + recurring.front() + " is recurring (lift by hand)";
    return;
  }
  for (const Recovery& l : lifted) AppendRecovery(state.history, l);
  d.recovered = std::move(lifted);
  if (state.reasons.empty()) {
    state.tainted = false;
    d.outcome = DecisionOutcome::kLift;
  } else {
    d.outcome = DecisionOutcome::kUpdateReasons;
  }
  d.emit_event = true;
  d.write_reasons = true;
  Plan(d, state);
}

void Policy::DecideRound(const FaultEvent& event, NodeState& state, Decision& d) {
  const std::string boot_id = d.reason.boot_id;  // the event's, else the node's
  auto field = [&](const char* key) {
    auto it = event.fields.find(key);
    return it == event.fields.end() ? std::string() : it->second;
  };
  const bool passed = field("status") == "ok";
  std::string detail = passed ? field("passed") + " of " + field("checks") + " checks passed (" +
                                    field("names") + ")"
                              : field("message");
  if (detail.empty()) detail = d.reason.summary;
  d.outcome = DecisionOutcome::kIgnored;
  if (!state.tainted) {
    // Nothing waits for it; an untainted node's rounds are not written.
    d.detail = "check round: node not tainted";
    return;
  }
  if (!NoteValidation(state, boot_id, passed, std::move(detail), clock_.Now())) {
    d.detail = "check round: nothing new";
    return;
  }
  // Written with the history, and the conditions follow (AwaitingValidation
  // -> ValidationFailed, or on to the lift at the next Expire).
  d.outcome = DecisionOutcome::kUpdateReasons;
  d.reason = Reason{};  // no reason of its own: no "also faulty" Event
  d.write_reasons = true;
  Plan(d, state);
  if (!passed && AwaitsValidation(state, boot_id)) {
    d.plan.events.push_back(
        {"Warning", "FaultlineValidationFailed",
         TruncateUtf8("check round failed in boot " + boot_id +
                          " after the reboot; the node stays out: " + field("message"),
                      1024)});
  }
}

Decision Policy::RefuseTaint(const Decision& taint, const FaultEvent& event, std::string detail) {
  NodeState& state = nodes_[taint.node];
  state.tainted = false;  // a kTaint decision found the node untainted
  state.reasons.clear();
  valve_.UndoNewTaint(taint.node);
  Decision d;
  d.node = taint.node;
  d.event_id = taint.event_id;
  d.reason = taint.reason;
  d.outcome = DecisionOutcome::kRefusedByValve;
  d.detail = std::move(detail);
  state.last_event.erase(EventKey(event));  // the taint's Event was not recorded
  RefusalEvent(d, state, event.rule);
  Plan(d, state);
  return d;
}

bool Policy::IsManaged(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.managed;
}

void Policy::Replay(const FaultEvent& event) {
  Remember(event.id);
  if (event.action == Action::kIgnore || !event.threshold || event.threshold->count <= 1) return;
  CountInWindow(event, EventTime(event));
}

std::vector<Decision> Policy::Expire(const std::function<bool(const std::string&)>& decides) {
  std::vector<Decision> out;
  const auto now = clock_.Now();
  for (auto& [name, state] : nodes_) {
    if (decides && !decides(name)) continue;
    std::vector<Recovery> lifted;
    for (auto it = state.reasons.begin(); it != state.reasons.end();) {
      const Reason& r = it->second;
      Recovery l{r.rule, "", "", now, r.first_seen, r.last_seen, {}, false};
      if (r.expires_at && *r.expires_at <= now) {
        l.how = "expire";
        l.detail = "quiet since " + FormatRfc3339(r.last_seen);
      } else if (RebootRecoveryDue(r, state.boot_id, state.boot_seen_at, now, options_.probation)) {
        // Verified: a passing round of the agent's checks in this boot.
        const Recovery* v = LatestValidation(state.history, state.boot_id);
        if ((v && v->passed) || (!v && !options_.require_validation)) {
          l.how = std::string(kRecoverReboot);
          l.boot_id = state.boot_id;
          l.detail = "boot id " + r.boot_id + " -> " + state.boot_id + ", quiet for " +
                     FormatDuration(r.probation.value_or(options_.probation));
          l.detail += v ? ", check round passed at " + FormatRfc3339(v->at) + ": " + v->detail
                        : ", checks not required";
        }
      }
      if (l.how.empty()) {
        ++it;
        continue;
      }
      lifted.push_back(std::move(l));
      it = state.reasons.erase(it);
    }
    if (lifted.empty() && state.history_dirty && state.tainted) {
      // A reboot seen by the watch: written now, so `explain` and the
      // node's annotation show it while the node waits for its checks.
      Decision d;
      d.node = name;
      d.outcome = DecisionOutcome::kUpdateReasons;
      d.write_reasons = true;
      Plan(d, state);
      out.push_back(std::move(d));
      continue;
    }
    if (lifted.empty() || !state.tainted) continue;
    for (const Recovery& l : lifted) AppendRecovery(state.history, l);
    Decision d;
    d.node = name;
    d.recovered = std::move(lifted);
    if (state.reasons.empty()) {
      state.tainted = false;
      d.outcome = DecisionOutcome::kLift;
      d.emit_event = true;
    } else {
      d.outcome = DecisionOutcome::kUpdateReasons;
    }
    d.write_reasons = true;
    Plan(d, state);
    out.push_back(std::move(d));
  }
  // Forget windows that had no hit for a whole span (by arrival: see Window).
  const auto mono = clock_.MonotonicNow();
  std::erase_if(windows_, [&](const auto& kv) {
    const Window& w = kv.second;
    bool gone = w.hits.empty();
    if (!gone && w.span.count() != 0) gone = mono - w.last_arrival >= w.span;
    if (gone) window_lru_.erase(w.lru);
    return gone;
  });
  while (!dedupe_lru_.empty() && mono - dedupe_lru_.back().second > options_.dedupe_ttl) {
    dedupe_index_.erase(dedupe_lru_.back().first);
    dedupe_lru_.pop_back();
  }
  return out;
}

bool Policy::Untaint(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return false;
  const bool was = it->second.tainted;
  it->second.tainted = false;
  it->second.reasons.clear();
  return was;
}

bool Policy::IsTainted(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.tainted;
}

std::vector<Reason> Policy::ActiveReasons(const std::string& node) const {
  std::vector<Reason> out;
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return out;
  for (const auto& [rule, r] : it->second.reasons) out.push_back(r);
  return out;
}

void Policy::MarkPersisted(const std::string& node) {
  auto it = nodes_.find(node);
  if (it != nodes_.end()) it->second.persisted_at = clock_.MonotonicNow();
}

int Policy::managed_nodes() const {
  int n = 0;
  for (const auto& [name, state] : nodes_) n += state.managed ? 1 : 0;
  return n;
}

int Policy::tainted_nodes() const {
  int n = 0;
  for (const auto& [name, state] : nodes_) n += state.managed && state.tainted ? 1 : 0;
  return n;
}

std::vector<std::string> Policy::Nodes() const {
  std::vector<std::string> out;
  for (const auto& [name, state] : nodes_) out.push_back(name);
  return out;
}

std::vector<std::string> Policy::TaintedNodes() const {
  std::vector<std::string> out;
  for (const auto& [name, state] : nodes_) {
    if (state.tainted) out.push_back(name);
  }
  return out;
}

}  // namespace faultline
