// SPDX-License-Identifier: Apache-2.0
// Wall-clock jumps (an NTP step, `date -s`) on the agent process: its
// pipeline (FakeSource -> matcher -> suppressor -> FakeEventSink) with a
// FakeClock whose wall time jumps while the monotonic time does not
// (FakeClock::JumpWall). What must hold: the suppression window and the
// checkpoint cadence run on the monotonic clock (a jump neither flushes a
// window early nor stalls it, nor stops or bursts checkpoint saves), and an
// event's detected_time is the wall time at detection (what the tainter's
// threshold windows and expiries read; their behaviour under an agent clock
// that is off is chaos_clock_test's).
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "collector/agent/pipeline.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/pipeline_harness.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_event_sink.h"
#include "tests/fakes/fake_source.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("agent wall clock forwards then backwards: the suppression window ends on time") {
  Pipeline::Options options = Harness::Defaults();
  options.suppression.window = seconds(60);
  Harness h(options);
  h.pipeline->Start();
  for (int i = 0; i < 10; ++i) h.source->Add(XidLine(0x3b));
  REQUIRE(h.Wait([&] { return h.source->read_count() == 10 && h.sink.delivered().size() == 1; }));
  const auto first_detected = h.sink.delivered()[0].detected_time;

  // A day forward: the window (30 s of it left) must not end early.
  h.clock.JumpWall(hours(24));
  CHECK_FALSE(h.HappensWithin(seconds(30), [&] { return h.sink.delivered().size() > 1; }));
  // Two days back (a day behind where it started): nor stall. The window's
  // last 30 s (monotonic) pass.
  h.clock.JumpWall(-hours(48));
  h.clock.Advance(seconds(31));
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 2; }));
  const FaultEvent follow_up = h.sink.delivered()[1];
  CHECK(follow_up.suppressed == 8);  // the 10th line, folding 9 repeats in all
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:10"; }));

  // A new occurrence after the window: published at once, stamped with the
  // (jumped) wall time at detection.
  h.clock.Advance(seconds(61));
  h.source->Add(XidLine(0x3b));
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 3; }));
  const auto detected = h.sink.delivered()[2].detected_time;
  CHECK(detected < first_detected);  // the wall clock is a day behind
  CHECK(detected > first_detected - hours(25));
  CHECK(h.StopNow() == 0);
}

TEST_CASE("agent wall clock backwards and forwards: checkpoints keep their cadence") {
  Harness h(Harness::Defaults());
  h.pipeline->Start();
  h.source->Add(XidLine(1));
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:1"; }));
  const std::size_t saves_before = h.source->committed().size();

  h.clock.JumpWall(-hours(1));
  h.source->Add(XidLine(2));
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:2"; }));
  h.clock.JumpWall(hours(24 * 365));
  h.source->Add(XidLine(3));
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:3"; }));
  // No burst of saves from the jump either: one commit per delivered record.
  CHECK(h.source->committed().size() - saves_before == 2);
  CHECK(h.sink.delivered().size() == 3);
  CHECK(h.StopNow() == 0);
}

}  // namespace
}  // namespace faultline
