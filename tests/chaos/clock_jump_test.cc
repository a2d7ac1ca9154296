// SPDX-License-Identifier: Apache-2.0
// Wall-clock jumps (an NTP step, `date -s`) on the tainter, and an agent
// whose clock is off: what the policy's windows, expiries and dedupe do.
// The monotonic clock never jumps; FakeClock::JumpWall moves the wall alone.
#include <doctest/doctest.h>

#include "tainter/core/policy.h"
#include "tests/fakes/fake_clock.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

FaultEvent Ev(const std::string& id, const std::string& rule = "nvidia.xid") {
  FaultEvent e;
  e.id = id;
  e.node = "gpu-1";
  e.rule = rule;
  e.action = Action::kTaint;
  e.summary = "fault";
  return e;
}

struct Fixture {
  Fixture() : policy({}, clock) {
    for (int i = 0; i < 10; ++i) policy.SetNode("gpu-" + std::to_string(i), true, false);
  }
  FakeClock clock;
  Policy policy;
};

TEST_CASE("tainter wall clock backwards: an expiring reason is not lifted early") {
  Fixture f;
  FaultEvent e = Ev("a", "nccl.timeout");
  e.expire = hours(1);
  e.detected_time = f.clock.Now();
  REQUIRE(f.policy.Decide(e).outcome == DecisionOutcome::kTaint);
  f.clock.JumpWall(-hours(2));
  f.clock.Advance(hours(1));
  CHECK(f.policy.Expire().empty());  // the wall clock reads 1 h before the fault
  CHECK(f.policy.IsTainted("gpu-1"));
  // Lifted once the wall clock passes the expiry it recorded.
  f.clock.Advance(hours(2));
  CHECK(f.policy.Expire().size() == 1);
  CHECK_FALSE(f.policy.IsTainted("gpu-1"));
}

TEST_CASE("tainter wall clock forwards: a duplicate id stays a duplicate (dedupe is monotonic)") {
  Fixture f;
  FaultEvent e = Ev("a");
  e.detected_time = f.clock.Now();
  REQUIRE(f.policy.Decide(e).outcome == DecisionOutcome::kTaint);
  f.clock.JumpWall(hours(72));  // past dedupe.ttl (48 h) on the wall clock only
  f.policy.Expire();
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kDuplicate);
}

TEST_CASE("an agent clock ahead of the tainter: its events count as now") {
  Fixture f;
  for (int i = 0; i < 2; ++i) {
    FaultEvent e = Ev("ahead-" + std::to_string(i), "ib.flap");
    e.threshold = EventThreshold{3, minutes(10), {}};
    e.detected_time = f.clock.Now() + hours(5);
    CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kBelowThreshold);
    f.clock.Advance(seconds(30));
    f.policy.Expire();
  }
  FaultEvent e = Ev("ahead-2", "ib.flap");
  e.threshold = EventThreshold{3, minutes(10), {}};
  e.detected_time = f.clock.Now() + hours(5);
  CHECK(f.policy.Decide(e).outcome == DecisionOutcome::kTaint);
}

TEST_CASE("an agent clock behind the tainter by more than the window: a threshold still fires") {
  // Three flaps 30 s apart from an agent whose clock is 11 min behind, the
  // tainter's periodic Expire() running between them (as its loop does).
  Fixture f;
  Decision last;
  for (int i = 0; i < 3; ++i) {
    FaultEvent e = Ev("behind-" + std::to_string(i), "ib.flap");
    e.threshold = EventThreshold{3, minutes(10), {}};
    e.detected_time = f.clock.Now() - minutes(11);
    last = f.policy.Decide(e);
    f.clock.Advance(seconds(30));
    f.policy.Expire();
  }
  CHECK(last.outcome == DecisionOutcome::kTaint);
}

}  // namespace
}  // namespace faultline
