// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/policy.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tainter/core/label_selector.h"
#include "tainter/core/reasons.h"
#include "tainter/core/recovery.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/sample_event.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

int next_id = 0;

FaultEvent Ev(const std::string& node, const std::string& rule = "nvidia.xid",
              Action action = Action::kTaint) {
  FaultEvent e = SampleEvent(node, "id-" + std::to_string(++next_id));
  e.rule = rule;
  e.action = action;
  return e;
}

FaultEvent WithThreshold(FaultEvent e, int count, seconds window,
                         std::vector<std::string> key = {}) {
  e.threshold = EventThreshold{count, window, std::move(key)};
  return e;
}

// A policy over `n` managed nodes gpu-0..gpu-(n-1).
struct Fixture {
  explicit Fixture(int n = 10, Policy::Options options = {}) : policy(options, clock) {
    for (int i = 0; i < n; ++i) policy.SetNode("gpu-" + std::to_string(i), true, false);
  }
  FaultEvent At(FaultEvent e) {
    e.detected_time = clock.Now();
    return e;
  }
  FakeClock clock;
  Policy policy;
};

// Every member of two decisions, or the first that differs.
std::string Differs(const Decision& a, const Decision& b) {
  if (a.outcome != b.outcome) return "outcome";
  if (a.node != b.node || a.event_id != b.event_id) return "node or event_id";
  if (!(a.reason == b.reason)) return "reason";
  if (a.escalated != b.escalated || a.emit_event != b.emit_event ||
      a.event_suppressed != b.event_suppressed || a.write_reasons != b.write_reasons ||
      a.opted_out != b.opted_out) {
    return "a flag";
  }
  if (a.detail != b.detail) return "detail";
  if (a.plan.write != b.plan.write || !(a.plan.reasons == b.plan.reasons) ||
      !(a.plan.history == b.plan.history)) {
    return "plan";
  }
  if (a.plan.events.size() != b.plan.events.size()) return "plan.events";
  for (std::size_t i = 0; i < a.plan.events.size(); ++i) {
    const PlannedEvent& x = a.plan.events[i];
    const PlannedEvent& y = b.plan.events[i];
    if (x.type != y.type || x.reason != y.reason || x.message != y.message) return "plan.events";
  }
  if (!(a.recovered == b.recovered)) return "recovered";
  return {};
}

TEST_CASE("a decision written into a kept Decision is the one a fresh Decide gives") {
  // The Tainter decides every event into one Decision, its buffers reused:
  // whatever the last decision held (evidence, a plan, a refusal, a
  // recovery), the next must be exactly the fresh one. Two policies, fed
  // alike; one answers fresh, the other into `kept`.
  Policy::Options options;
  options.max_fraction = 0.2;  // 2 of 10 nodes, then refusals
  options.per_rule_max_fraction = 0.2;
  options.persist_interval = seconds(30);
  Fixture fresh(10, options);
  Fixture reused(10, options);
  for (Fixture* f : {&fresh, &reused}) {
    f->policy.SetNode("gpu-9", true, /*opted_out=*/true);
    f->policy.SetNode("cpu-0", false, false);
    f->policy.SetBootId("gpu-1", "boot-a");
  }
  auto lines = [](int n, const std::string& tag) {
    std::vector<std::string> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::string& line = out[static_cast<std::size_t>(i)];
      line.append(tag).append(" line ").append(std::to_string(i)).append(" ").append(tag);
    }
    return out;
  };
  std::vector<FaultEvent> events;
  int id = 0;
  auto add = [&](FaultEvent e) {
    e.id = "kept-" + std::to_string(++id);
    events.push_back(std::move(e));
  };
  for (int round = 0; round < 3; ++round) {
    FaultEvent taint = Ev("gpu-1");
    taint.evidence = lines(8, "aer" + std::to_string(round));
    taint.boot_id = round == 2 ? "boot-b" : "boot-a";
    taint.recover = "reboot";
    taint.condition = "GPUFault";
    taint.expire = hours(1);
    add(taint);
    add(Ev("cpu-0"));  // unmanaged: a reason with only its rule, after one with evidence
    add(Ev("gpu-1", "nvidia.xid13", Action::kEvent));  // no evidence, an Event
    FaultEvent repeat = Ev("gpu-1");
    repeat.evidence = lines(round + 1, "short");
    repeat.summary = "Xid 79 again, round " + std::to_string(round);
    add(repeat);
    add(Ev("gpu-2"));
    add(Ev("gpu-3"));  // the valve refuses: 2 of 10 tainted
    add(Ev("gpu-4", "ib.link_flap", Action::kIgnore));
    add(Ev("cpu-0"));  // unmanaged
    add(Ev("gpu-9"));  // opted out
    add(WithThreshold(Ev("gpu-5", "ib.port_flap"), 3, minutes(10), {"port"}));
    FaultEvent stale = Ev("gpu-6");
    stale.expire = seconds(1);
    stale.detected_time = fresh.clock.Now() + seconds(20 * id) - minutes(5);  // when decided
    add(stale);
    FaultEvent cleared = Ev("gpu-2", "nvidia.xid-recovered", Action::kEvent);
    cleared.clears = {"nvidia.xid"};
    add(cleared);
    FaultEvent round_event = Ev("gpu-1", std::string(kRoundRule), Action::kEvent);
    round_event.fields = {{"status", round == 1 ? "fail" : "ok"}, {"message", "dcgm diag"}};
    round_event.boot_id = "boot-b";
    add(round_event);
  }
  events.push_back(events.front());  // a duplicate
  Decision kept;
  std::set<DecisionOutcome> outcomes;
  int n = 0;
  for (const FaultEvent& e : events) {
    CAPTURE(e.id);
    CAPTURE(e.rule);
    for (Fixture* f : {&fresh, &reused}) f->clock.Advance(seconds(20));
    // Detected now, unless the test set the time (a stale event).
    const FaultEvent timed = e.detected_time == FaultEvent().detected_time ? fresh.At(e) : e;
    const Decision want = fresh.policy.Decide(timed);
    reused.policy.Decide(timed, kept);
    CHECK(Differs(kept, want) == "");
    outcomes.insert(want.outcome);
    // Every other one decided again (no dedupe): Redecide into the same.
    if (++n % 2 == 0) {
      const Decision again = fresh.policy.Redecide(timed);
      reused.policy.Redecide(timed, kept);
      CHECK(Differs(kept, again) == "");
    }
  }
  // The sequence went through every outcome an event can have.
  CHECK(outcomes ==
        std::set<DecisionOutcome>{DecisionOutcome::kIgnored, DecisionOutcome::kDuplicate,
                                  DecisionOutcome::kUnmanaged, DecisionOutcome::kBelowThreshold,
                                  DecisionOutcome::kStale, DecisionOutcome::kRecordEvent,
                                  DecisionOutcome::kTaint, DecisionOutcome::kUpdateReasons,
                                  DecisionOutcome::kRefusedByValve, DecisionOutcome::kLift});
}

TEST_CASE("a taint rule without threshold taints the node at once with its reason") {
  Fixture f;
  Decision d = f.policy.Decide(f.At(Ev("gpu-1")));
  CHECK(d.outcome == DecisionOutcome::kTaint);
  CHECK(d.emit_event);
  CHECK(d.write_reasons);
  CHECK(d.reason.rule == "nvidia.xid");
  CHECK(d.reason.summary == "Xid 79: GPU has fallen off the bus");
  CHECK(d.reason.first_seen == f.clock.Now());
  CHECK_FALSE(d.reason.expires_at.has_value());
  CHECK(f.policy.IsTainted("gpu-1"));
  CHECK(f.policy.tainted_nodes() == 1);
}

TEST_CASE("an event id already decided is a duplicate, decided once") {
  Fixture f;
  FaultEvent e = f.At(Ev("gpu-1"));
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kDuplicate);
  f.clock.Advance(hours(1));
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kDuplicate);
}

TEST_CASE("the dedupe set is bounded: the least recently seen id is forgotten") {
  Policy::Options o;
  o.dedupe_capacity = 2;
  Fixture f(10, o);
  FaultEvent a = f.At(Ev("gpu-1", "r", Action::kEvent));
  FaultEvent b = f.At(Ev("gpu-1", "r", Action::kEvent));
  FaultEvent c = f.At(Ev("gpu-1", "r", Action::kEvent));
  f.policy.Decide(a);
  f.policy.Decide(b);
  f.policy.Decide(c);
  CHECK(f.policy.dedupe_size() == 2);
  CHECK(f.policy.Decide(c).outcome == DecisionOutcome::kDuplicate);
  CHECK(f.policy.Decide(a).outcome != DecisionOutcome::kDuplicate);
}

TEST_CASE("dedupe entries lapse after their TTL") {
  Policy::Options o;
  o.dedupe_ttl = minutes(5);
  Fixture f(10, o);
  FaultEvent e = f.At(Ev("gpu-1", "r", Action::kEvent));
  f.policy.Decide(e);
  f.clock.Advance(minutes(6));
  f.policy.Expire();
  CHECK(f.policy.dedupe_size() == 0);
}

TEST_CASE("action ignore is ignored and action event records an Event without tainting") {
  Fixture f;
  CHECK(f.policy.Decide(f.At(Ev("gpu-1", "r", Action::kIgnore))).outcome ==
        DecisionOutcome::kIgnored);
  Decision d = f.policy.Decide(f.At(Ev("gpu-1", "r", Action::kEvent)));
  CHECK(d.outcome == DecisionOutcome::kRecordEvent);
  CHECK(d.emit_event);
  CHECK_FALSE(f.policy.IsTainted("gpu-1"));
  SUBCASE("repeats within the event interval do not emit another Event") {
    Decision again = f.policy.Decide(f.At(Ev("gpu-1", "r", Action::kEvent)));
    CHECK(again.outcome == DecisionOutcome::kRecordEvent);
    CHECK_FALSE(again.emit_event);
    f.clock.Advance(minutes(11));
    CHECK(f.policy.Decide(f.At(Ev("gpu-1", "r", Action::kEvent))).emit_event);
  }
}

TEST_CASE("an application Xid right after a hardware Xid on the node still gets its Event") {
  Fixture f;
  REQUIRE(f.policy.Decide(f.At(Ev("gpu-1"))).outcome == DecisionOutcome::kTaint);
  FaultEvent xid13 = Ev("gpu-1", "nvidia.xid", Action::kEvent);
  xid13.summary = "Xid 13: graphics engine exception";
  Decision d = f.policy.Decide(f.At(xid13));
  CHECK(d.outcome == DecisionOutcome::kRecordEvent);
  CHECK(d.emit_event);
  xid13.id = "id-again";
  CHECK_FALSE(f.policy.Decide(f.At(xid13)).emit_event);  // the same fault again: rate-limited
}

TEST_CASE("nodes outside the selector, and unknown nodes, are unmanaged") {
  Fixture f;
  f.policy.SetNode("cpu-1", false, false);
  CHECK(f.policy.Decide(f.At(Ev("cpu-1"))).outcome == DecisionOutcome::kUnmanaged);
  CHECK(f.policy.Decide(f.At(Ev("never-seen"))).outcome == DecisionOutcome::kUnmanaged);
  CHECK(f.policy.tainted_nodes() == 0);
}

TEST_CASE("an opted-out node is never tainted, the fault is recorded as an Event") {
  Fixture f;
  f.policy.SetNode("gpu-2", true, true);
  Decision d = f.policy.Decide(f.At(Ev("gpu-2")));
  CHECK(d.outcome == DecisionOutcome::kRecordEvent);
  CHECK(d.opted_out);
  CHECK(d.emit_event);
  CHECK_FALSE(f.policy.IsTainted("gpu-2"));
}

TEST_CASE("a threshold counts events within the window per node and key captures") {
  Fixture f;
  auto flap = [&](const std::string& node, const std::string& port) {
    FaultEvent e = WithThreshold(Ev(node, "ib.flap"), 3, minutes(10), {"port"});
    e.fields["port"] = port;
    return f.policy.Decide(f.At(e));
  };
  Decision d = flap("gpu-1", "1");
  CHECK(d.outcome == DecisionOutcome::kBelowThreshold);
  CHECK(d.detail == "1/3 in 10m");
  CHECK(flap("gpu-1", "2").outcome == DecisionOutcome::kBelowThreshold);  // another port
  CHECK(flap("gpu-2", "1").outcome == DecisionOutcome::kBelowThreshold);  // another node
  CHECK(flap("gpu-1", "1").outcome == DecisionOutcome::kBelowThreshold);
  SUBCASE("the third in the window taints") {
    CHECK(flap("gpu-1", "1").outcome == DecisionOutcome::kTaint);
  }
  SUBCASE("hits older than the window no longer count") {
    f.clock.Advance(minutes(11));
    CHECK(flap("gpu-1", "1").outcome == DecisionOutcome::kBelowThreshold);
  }
}

TEST_CASE("suppressed repeats count: one event stands for 1 + suppressed lines") {
  Fixture f;
  FaultEvent e = WithThreshold(Ev("gpu-1", "ib.flap"), 5, minutes(10));
  e.suppressed = 3;
  CHECK(f.policy.Decide(f.At(e)).outcome == DecisionOutcome::kBelowThreshold);  // 4
  FaultEvent e2 = WithThreshold(Ev("gpu-1", "ib.flap"), 5, minutes(10));
  CHECK(f.policy.Decide(f.At(e2)).outcome == DecisionOutcome::kTaint);  // 5
}

TEST_CASE("replayed events fill the window without deciding, and are then duplicates") {
  Fixture f;
  FaultEvent a = f.At(WithThreshold(Ev("gpu-1", "ib.flap"), 3, minutes(10)));
  FaultEvent b = f.At(WithThreshold(Ev("gpu-1", "ib.flap"), 3, minutes(10)));
  f.policy.Replay(a);
  f.policy.Replay(b);
  CHECK_FALSE(f.policy.IsTainted("gpu-1"));
  CHECK(f.policy.Decide(b).outcome == DecisionOutcome::kDuplicate);
  CHECK(f.policy.Decide(f.At(WithThreshold(Ev("gpu-1", "ib.flap"), 3, minutes(10)))).outcome ==
        DecisionOutcome::kTaint);
}

TEST_CASE("a reason with expire lapses after the quiet period and the taint is lifted") {
  Fixture f;
  FaultEvent e = Ev("gpu-1", "nccl.timeout");
  e.expire = hours(1);
  REQUIRE(f.policy.Decide(f.At(e)).outcome == DecisionOutcome::kTaint);
  f.clock.Advance(minutes(59));
  CHECK(f.policy.Expire().empty());
  SUBCASE("quiet for the whole period") {
    f.clock.Advance(minutes(1));
    std::vector<Decision> lifts = f.policy.Expire();
    REQUIRE(lifts.size() == 1);
    CHECK(lifts[0].outcome == DecisionOutcome::kLift);
    CHECK(lifts[0].node == "gpu-1");
    CHECK_FALSE(f.policy.IsTainted("gpu-1"));
  }
  SUBCASE("a repeat extends the period and does not taint again") {
    FaultEvent again = Ev("gpu-1", "nccl.timeout");
    again.expire = hours(1);
    Decision d = f.policy.Decide(f.At(again));
    CHECK(d.outcome == DecisionOutcome::kUpdateReasons);
    CHECK_FALSE(d.emit_event);
    f.clock.Advance(minutes(30));
    CHECK(f.policy.Expire().empty());
    f.clock.Advance(minutes(30));
    CHECK(f.policy.Expire().size() == 1);
  }
}

TEST_CASE("the taint stays while any reason is active, reasons without expire never lapse") {
  Fixture f;
  FaultEvent soft = Ev("gpu-1", "nccl.timeout");
  soft.expire = hours(1);
  REQUIRE(f.policy.Decide(f.At(soft)).outcome == DecisionOutcome::kTaint);
  Decision hw = f.policy.Decide(f.At(Ev("gpu-1", "nvidia.xid")));
  CHECK(hw.outcome == DecisionOutcome::kUpdateReasons);
  CHECK(hw.emit_event);  // a new rule on the node
  CHECK(hw.write_reasons);
  f.clock.Advance(hours(2));
  std::vector<Decision> ds = f.policy.Expire();
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].outcome == DecisionOutcome::kUpdateReasons);
  CHECK(ds[0].write_reasons);
  CHECK(f.policy.IsTainted("gpu-1"));
  REQUIRE(f.policy.ActiveReasons("gpu-1").size() == 1);
  CHECK(f.policy.ActiveReasons("gpu-1")[0].rule == "nvidia.xid");
  f.clock.Advance(hours(24 * 30));
  CHECK(f.policy.Expire().empty());
  CHECK(f.policy.IsTainted("gpu-1"));
}

TEST_CASE("an event whose quiet period was over before it arrived does not taint") {
  Fixture f;
  FaultEvent e = Ev("gpu-1", "nccl.timeout");
  e.expire = minutes(10);
  e.detected_time = f.clock.Now() - minutes(20);
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kStale);
  CHECK_FALSE(f.policy.IsTainted("gpu-1"));
}

TEST_CASE("the valve allows at most max_fraction of managed nodes tainted") {
  Fixture f(20);  // 10% of 20 = 2
  CHECK(f.policy.Decide(f.At(Ev("gpu-1", "a"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(f.At(Ev("gpu-2", "b"))).outcome == DecisionOutcome::kTaint);
  Decision d = f.policy.Decide(f.At(Ev("gpu-3", "c")));
  CHECK(d.outcome == DecisionOutcome::kRefusedByValve);
  CHECK(d.emit_event);
  CHECK(d.detail.find("max_fraction") == 0);
  CHECK_FALSE(f.policy.IsTainted("gpu-3"));
  SUBCASE("the would-be taint's Event is rate-limited") {
    CHECK_FALSE(f.policy.Decide(f.At(Ev("gpu-3", "c"))).emit_event);
  }
  SUBCASE("lifting is unaffected by the valve, and frees a slot") {
    CHECK(f.policy.Untaint("gpu-1"));
    CHECK(f.policy.Decide(f.At(Ev("gpu-3", "c"))).outcome == DecisionOutcome::kTaint);
  }
  SUBCASE("unmanaged nodes do not count toward the denominator") {
    f.policy.SetNode("cpu-1", false, false);
    CHECK(f.policy.managed_nodes() == 20);
  }
}

TEST_CASE("a storm's refusal Events stay within refusal_events_per_minute, the rest are counted") {
  Policy::Options o;
  o.refusal_events_per_minute = 3;
  o.max_new_taints = 0;  // the share alone holds, as in a storm
  Fixture f(100, o);     // 10% of 100: 10 taints
  for (int i = 0; i < 10; ++i) {
    REQUIRE(f.policy.Decide(f.At(Ev("gpu-" + std::to_string(i)))).outcome ==
            DecisionOutcome::kTaint);
  }
  auto refuse = [&](int node) {
    Decision d = f.policy.Decide(f.At(Ev("gpu-" + std::to_string(node))));
    REQUIRE(d.outcome == DecisionOutcome::kRefusedByValve);
    const bool planned = std::any_of(d.plan.events.begin(), d.plan.events.end(), [](const auto& e) {
      return e.reason == "FaultlineValveShut";
    });
    CHECK(planned == d.emit_event);  // a suppressed Event is not in the plan
    CHECK(d.emit_event != d.event_suppressed);
    return d.emit_event;
  };
  int told = 0;
  for (int i = 10; i < 30; ++i) told += refuse(i) ? 1 : 0;
  CHECK(told == 3);              // the burst; 17 counted only
  f.clock.Advance(seconds(20));  // a third of a minute: one more
  CHECK(refuse(30));
  CHECK_FALSE(refuse(31));
  f.clock.Advance(minutes(5));  // refilled to the burst, no further
  told = 0;
  for (int i = 32; i < 40; ++i) told += refuse(i) ? 1 : 0;
  CHECK(told == 3);
}

TEST_CASE("refusal_events_per_minute 0: no refusal Events at all") {
  Policy::Options o;
  o.refusal_events_per_minute = 0;
  Fixture f(10, o);  // 1 taint
  CHECK(f.policy.Decide(f.At(Ev("gpu-1"))).outcome == DecisionOutcome::kTaint);
  Decision d = f.policy.Decide(f.At(Ev("gpu-2")));
  CHECK(d.outcome == DecisionOutcome::kRefusedByValve);
  CHECK_FALSE(d.emit_event);
  CHECK(d.event_suppressed);
}

TEST_CASE("the valve's fractions allow at least min_allowed nodes") {
  Fixture f(5);  // floor(0.1 * 5) = 0, but min_allowed = 1
  CHECK(f.policy.Decide(f.At(Ev("gpu-1"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(f.At(Ev("gpu-2"))).outcome == DecisionOutcome::kRefusedByValve);
}

TEST_CASE("the valve limits each rule's share separately") {
  Policy::Options o;
  o.max_fraction = 0.5;
  o.per_rule_max_fraction = 0.1;
  Fixture f(20, o);  // global 10, per rule 2
  CHECK(f.policy.Decide(f.At(Ev("gpu-1", "bad.rule"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(f.At(Ev("gpu-2", "bad.rule"))).outcome == DecisionOutcome::kTaint);
  Decision d = f.policy.Decide(f.At(Ev("gpu-3", "bad.rule")));
  CHECK(d.outcome == DecisionOutcome::kRefusedByValve);
  CHECK(d.detail.find("per_rule_max_fraction") == 0);
  CHECK(f.policy.Decide(f.At(Ev("gpu-3", "other.rule"))).outcome == DecisionOutcome::kTaint);
}

// Only the new-taint rate limits: 2 new taints per 10 minutes.
Policy::Options OnlyTwoNewTaintsPerTenMinutes() {
  Policy::Options o;
  o.max_fraction = 1.0;
  o.per_rule_max_fraction = 1.0;
  o.max_new_taints = 2;
  o.new_taint_window = minutes(10);
  return o;
}

TEST_CASE("the valve allows at most max_new_taints new taints per window") {
  Fixture f(20, OnlyTwoNewTaintsPerTenMinutes());
  CHECK(f.policy.Decide(f.At(Ev("gpu-1"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(f.At(Ev("gpu-2"))).outcome == DecisionOutcome::kTaint);
  Decision d = f.policy.Decide(f.At(Ev("gpu-3")));
  CHECK(d.outcome == DecisionOutcome::kRefusedByValve);
  CHECK(d.detail.find("max_new_taints") == 0);
  f.clock.Advance(minutes(10));
  CHECK(f.policy.Decide(f.At(Ev("gpu-3"))).outcome == DecisionOutcome::kTaint);
}

// The fleet's record refuses a taint this replica decided (RefuseTaint):
// that taint's own time leaves the new-taint window, not the latest one's,
// or the window would free a place too early when several were decided.
TEST_CASE("a taint the fleet refused leaves the new-taint window with its own time") {
  Fixture f(20, OnlyTwoNewTaintsPerTenMinutes());
  const FaultEvent first = f.At(Ev("gpu-1"));
  const Decision taint = f.policy.Decide(first);
  REQUIRE(taint.outcome == DecisionOutcome::kTaint);
  f.clock.Advance(minutes(5));
  REQUIRE(f.policy.Decide(f.At(Ev("gpu-2"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.RefuseTaint(taint, first, "fleet: max_new_taints").outcome ==
        DecisionOutcome::kRefusedByValve);
  // Six minutes later gpu-2's taint (5 minutes old at the refusal) is still
  // in the window: one place, not two.
  f.clock.Advance(minutes(6));
  CHECK(f.policy.Decide(f.At(Ev("gpu-3"))).outcome == DecisionOutcome::kTaint);
  CHECK(f.policy.Decide(f.At(Ev("gpu-4"))).outcome == DecisionOutcome::kRefusedByValve);
}

TEST_CASE("adoption restores reasons and never re-taints what is tainted") {
  Fixture f;
  Reason r;
  r.rule = "nccl.timeout";
  r.first_seen = r.last_seen = f.clock.Now();
  r.expires_at = f.clock.Now() + minutes(30);
  f.policy.Adopt("gpu-1", true, {r});
  CHECK(f.policy.IsTainted("gpu-1"));
  Decision d = f.policy.Decide(f.At(Ev("gpu-1", "nccl.timeout")));
  CHECK(d.outcome == DecisionOutcome::kUpdateReasons);
  SUBCASE("a repeat of a rule without expire makes the adopted reason permanent") {
    f.clock.Advance(hours(1));
    CHECK(f.policy.Expire().empty());
  }
}

TEST_CASE("our taint found without an annotation is adopted with a reason that never expires") {
  Fixture f;
  f.policy.Adopt("gpu-1", true, {});
  std::vector<Reason> rs = f.policy.ActiveReasons("gpu-1");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].rule == "adopted");
  CHECK_FALSE(rs[0].expires_at.has_value());
  f.clock.Advance(hours(24 * 365));
  CHECK(f.policy.Expire().empty());
  CHECK(f.policy.tainted_nodes() == 1);
}

TEST_CASE("adopting an untainted node drops reasons left in its annotation") {
  Fixture f;
  Reason r;
  r.rule = "x";
  f.policy.Adopt("gpu-1", false, {r});
  CHECK_FALSE(f.policy.IsTainted("gpu-1"));
  CHECK(f.policy.ActiveReasons("gpu-1").empty());
}

TEST_CASE("repeats of a tainted rule write the annotation at most once per persist interval") {
  Fixture f;
  REQUIRE(f.policy.Decide(f.At(Ev("gpu-1"))).outcome == DecisionOutcome::kTaint);
  f.policy.MarkPersisted("gpu-1");
  f.clock.Advance(seconds(10));
  CHECK_FALSE(f.policy.Decide(f.At(Ev("gpu-1"))).write_reasons);
  f.clock.Advance(minutes(1));
  Decision d = f.policy.Decide(f.At(Ev("gpu-1")));
  CHECK(d.write_reasons);
  CHECK(d.reason.last_seen == f.clock.Now());
  CHECK(d.reason.first_seen == f.clock.Now() - minutes(1) - seconds(10));
}

TEST_CASE("reasons round-trip through the annotation JSON") {
  FakeClock clock;
  Reason r;
  r.rule = "nvidia.xid";
  r.summary = "Xid 79";
  r.message = "NVRM: Xid 79";
  r.event_id = "abc";
  r.first_seen = r.last_seen = std::chrono::time_point_cast<std::chrono::microseconds>(clock.Now());
  r.expires_at = r.first_seen + hours(1);
  Reason adopted;
  adopted.rule = "adopted";
  adopted.first_seen = adopted.last_seen = r.first_seen;
  Result<std::vector<Reason>> back = DecodeReasons(EncodeReasons({r, adopted}));
  REQUIRE(back.ok());
  REQUIRE(back->size() == 2);
  CHECK((*back)[0] == r);
  CHECK((*back)[1] == adopted);
  CHECK_FALSE(DecodeReasons("not json").ok());
  CHECK_FALSE(DecodeReasons("{\"rule\":\"x\"}").ok());
  CHECK_FALSE(DecodeReasons("[{\"summary\":\"no rule\"}]").ok());
}

TEST_CASE("the annotation is bounded: the oldest messages go first, then whole reasons") {
  std::vector<Reason> rs;
  for (int i = 0; i < 40; ++i) {
    Reason r;
    r.rule = "rule-" + std::to_string(i);
    r.message = std::string(500, 'm');
    r.summary = std::string(100, 's');
    r.last_seen = std::chrono::system_clock::time_point(seconds(1000 + i));
    rs.push_back(r);
  }
  std::size_t dropped = 0;
  std::string text = EncodeReasons(rs, 16UL * 1024, &dropped);
  CHECK(text.size() <= 16 * 1024);
  CHECK(dropped == 0);
  Result<std::vector<Reason>> back = DecodeReasons(text);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 40);
  CHECK((*back)[0].message.empty());         // oldest lost its message
  CHECK((*back)[39].message.size() == 500);  // newest kept it
  std::string tiny = EncodeReasons(rs, 1024, &dropped);
  CHECK(tiny.size() <= 1024);
  CHECK(dropped > 0);
  Result<std::vector<Reason>> few = DecodeReasons(tiny);
  REQUIRE(few.ok());
  CHECK(few->back().rule == "rule-39");  // the newest survive
}

// Issue 28, item 5: the lines before a tainting fault travel from the event
// to the reason (annotation, for `explain`) and to the Warning Event.
TEST_CASE("a taint's evidence is kept in its reason and shown in its Event, newest lines first") {
  Fixture f;
  FaultEvent e = Ev("gpu-1");
  e.evidence = {"pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received",
                "nvidia 0000:3b:00.0: AER: can't recover (no error_detected callback)"};
  Decision d = f.policy.Decide(f.At(e));
  REQUIRE(d.outcome == DecisionOutcome::kTaint);
  CHECK(d.reason.evidence == e.evidence);
  REQUIRE(d.plan.events.size() == 1);
  const std::string& msg = d.plan.events[0].message;
  CHECK(msg.find("\nlines before it:\n" + e.evidence[0] + "\n" + e.evidence[1]) !=
        std::string::npos);

  // A message near the Event's bound keeps the newest evidence lines only.
  Reason r = d.reason;
  r.message = std::string(700, 'm');
  r.evidence = {std::string(200, 'a'), std::string(200, 'b'), "just before"};
  const std::string cut = EventMessage(r);
  CHECK(cut.size() <= 1024);
  CHECK(cut.find("just before") != std::string::npos);
  CHECK(cut.find(std::string(200, 'b')) != std::string::npos);
  CHECK(cut.find(std::string(200, 'a')) == std::string::npos);

  Result<std::vector<Reason>> back = DecodeReasons(EncodeReasons({d.reason}));
  REQUIRE(back.ok());
  CHECK(back->at(0).evidence == e.evidence);
}

TEST_CASE("an annotation that does not fit drops the oldest evidence before any message") {
  std::vector<Reason> rs;
  for (int i = 0; i < 10; ++i) {
    Reason r;
    r.rule = "rule-" + std::to_string(i);
    r.message = std::string(300, 'm');
    r.evidence = std::vector<std::string>(4, std::string(400, 'e'));
    r.last_seen = std::chrono::system_clock::time_point(seconds(1000 + i));
    rs.push_back(r);
  }
  std::size_t dropped = 0;
  const std::string text = EncodeReasons(rs, 16UL * 1024, &dropped);
  CHECK(text.size() <= 16 * 1024);
  CHECK(dropped == 0);
  Result<std::vector<Reason>> back = DecodeReasons(text);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 10);
  CHECK(back->front().evidence.empty());                         // the oldest lost its evidence
  CHECK(back->back().evidence.size() == 4);                      // the newest kept it
  for (const Reason& r : *back) CHECK(r.message.size() == 300);  // no message was touched
}

// Issue 11.6: the Event key was rule + summary, and nccl.warn's summary
// quotes the log line, so every distinct line made its own Event.
TEST_CASE("Events are rate-limited per node and rule: distinct summaries of one rule make one") {
  Fixture f;
  int events = 0;
  for (int i = 0; i < 50; ++i) {
    FaultEvent warn = Ev("gpu-1", "nccl.warn", Action::kEvent);
    warn.summary = "NCCL WARN: line " + std::to_string(i) + " a pod printed";
    events += f.policy.Decide(f.At(warn)).emit_event ? 1 : 0;
  }
  CHECK(events == 1);
  f.clock.Advance(minutes(10));
  CHECK(f.policy.Decide(f.At(Ev("gpu-1", "nccl.warn", Action::kEvent))).emit_event);
}

// Issue 11.10: a threshold window per distinct value of the key captures,
// which a pod's output controls, grew without bound.
TEST_CASE("threshold windows are bounded: the least recently hit is forgotten past the limit") {
  Policy::Options o;
  o.max_windows = 100;
  Fixture f(10, o);
  for (int i = 0; i < 1000; ++i) {
    FaultEvent e = WithThreshold(Ev("gpu-1", "nccl.ib-error"), 3, minutes(10), {"peer"});
    e.fields["peer"] = "peer-" + std::to_string(i);
    f.policy.Decide(f.At(e));
  }
  CHECK(f.policy.window_count() == 100);
  // The most recent windows still count.
  FaultEvent again = WithThreshold(Ev("gpu-1", "nccl.ib-error"), 3, minutes(10), {"peer"});
  again.fields["peer"] = "peer-999";
  CHECK(f.policy.Decide(f.At(again)).detail == "2/3 in 10m");
}

// Issue 11.7: expire travels in the event; a forged or broken one must not
// hold a taint for ever (nor overflow the clock arithmetic).
TEST_CASE("an event's expire and threshold window are bounded by the policy's limits") {
  Fixture f;
  FaultEvent e = Ev("gpu-1", "nccl.timeout");
  e.expire = hours(24 * 365 * 1000);
  Decision d = f.policy.Decide(f.At(e));
  REQUIRE(d.outcome == DecisionOutcome::kTaint);
  REQUIRE(d.reason.expires_at.has_value());
  CHECK(*d.reason.expires_at == f.clock.Now() + f.policy.options().max_expire);
}

// Issue 11.10: past max_annotation_bytes the oldest reasons were dropped,
// permanent hardware reasons included, while expiring ones stayed.
TEST_CASE("an oversized annotation drops expiring reasons before permanent ones") {
  std::vector<Reason> rs;
  for (int i = 0; i < 40; ++i) {
    Reason r;
    r.rule = "rule-" + std::to_string(i);
    r.last_seen = std::chrono::system_clock::time_point(seconds(1000 + i));
    // The oldest five are permanent (hardware); the rest expire.
    if (i >= 5) r.expires_at = r.last_seen + hours(1);
    rs.push_back(r);
  }
  std::size_t dropped = 0;
  std::string text = EncodeReasons(rs, 2048, &dropped);
  CHECK(text.size() <= 2048);
  REQUIRE(dropped > 0);
  Result<std::vector<Reason>> kept = DecodeReasons(text);
  REQUIRE(kept.ok());
  int permanent = 0;
  for (const Reason& r : *kept) permanent += r.expires_at ? 0 : 1;
  CHECK(permanent == 5);
}

TEST_CASE("label selectors match as kubectl's equality-based selectors do") {
  Result<LabelSelector> s = LabelSelector::Parse("gpu=true, zone!=b,accel,!faultline.dev/opt-out");
  REQUIRE(s.ok());
  CHECK(s->Matches({{"gpu", "true"}, {"accel", "h100"}}));
  CHECK_FALSE(s->Matches({{"gpu", "true"}, {"accel", "h100"}, {"zone", "b"}}));
  CHECK_FALSE(s->Matches({{"gpu", "true"}}));
  CHECK_FALSE(s->Matches({{"gpu", "true"}, {"accel", "x"}, {"faultline.dev/opt-out", "true"}}));
  CHECK(LabelSelector::Parse("")->Matches({}));
  CHECK_FALSE(LabelSelector::Parse("zone in (a,b)").ok());
  Result<LabelMatch> opt = LabelMatch::Parse("faultline.dev/opt-out=true");
  REQUIRE(opt.ok());
  CHECK(opt->Matches({{"faultline.dev/opt-out", "true"}}));
  CHECK_FALSE(opt->Matches({{"faultline.dev/opt-out", "false"}}));
}

}  // namespace
}  // namespace faultline
