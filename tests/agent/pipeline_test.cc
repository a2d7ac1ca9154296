// SPDX-License-Identifier: Apache-2.0
// The agent's pipeline with a FakeSource and a FakeEventSink: commits follow
// deliveries, failures hold checkpoints, a full sink holds sources back,
// shutdown order, suppression totals.
#include "collector/agent/pipeline.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include <doctest/doctest.h>

#include "collector/agent/pipeline_testing.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/pipeline_harness.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_event_sink.h"
#include "tests/fakes/fake_source.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("a record is committed only after the event it produced is delivered") {
  Harness h;
  h.sink.Disconnect();
  h.pipeline->Start();
  h.source->Add("kernel: harmless line");
  h.source->Add(XidLine(0x3b));
  h.source->Add("another harmless line");
  REQUIRE(h.Wait([&] { return h.sink.queued() == 1 && h.source->read_count() == 3; }));
  // The first record has no event: it commits. The fault and everything after it wait.
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:1"; }));
  CHECK_FALSE(Contains(h.source->committed(), "fake:2"));
  CHECK_FALSE(Contains(h.source->committed(), "fake:3"));

  h.sink.Connect();
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:3"; }));
  CHECK(h.source->committed() == std::vector<std::string>{"fake:1", "fake:2", "fake:3"});
  const auto delivered = h.sink.delivered();
  REQUIRE(delivered.size() == 1);
  CHECK(delivered[0].node == "gpu-1");
  CHECK(delivered[0].boot_id == "boot-1");
  CHECK(delivered[0].rule == "test.xid");
  CHECK(delivered[0].fields.at("pci") == "0000:3b:00");
  CHECK(delivered[0].id == MakeEventId("gpu-1", "fake", "fake:2", "test.xid"));
  CHECK(h.StopNow() == 0);
  CHECK(h.metrics.events_delivered.value() == 1);
  CHECK(h.registry.CounterValue("faultline_agent_matches_total", {{"rule", "test.xid"}}) == 1);
  CHECK(h.registry.CounterValue("faultline_agent_source_lines_total", {{"source", "fake"}}) == 3);
}

TEST_CASE("a failed delivery holds the checkpoint while later events are still sent") {
  Harness h;
  h.sink.FailNext(UnavailableError("message timed out"));
  h.pipeline->Start();
  h.source->Add("harmless 1");
  h.source->Add(XidLine(1));  // fails
  h.source->Add("harmless 2");
  h.source->Add(XidLine(2));  // delivered
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 1; }));
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:1"; }));
  CHECK(h.sink.delivered()[0].fields.at("pci") == "0000:02:00");
  CHECK(h.StopNow() == 1);  // the failed one is reported as undelivered
  CHECK(h.source->saved() == "fake:1");
  CHECK(h.source->committed() == std::vector<std::string>{"fake:1"});
  CHECK(h.metrics.events_undelivered.value() == 1);
}

TEST_CASE("an event Kafka rejects for good is counted and its record still commits") {
  Harness h;
  h.sink.FailNext(InvalidArgumentError("MSG_SIZE_TOO_LARGE"));
  h.pipeline->Start();
  h.source->Add(XidLine(1));
  h.source->Add("harmless");
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:2"; }));
  CHECK(h.metrics.events_rejected.value() == 1);
  CHECK(h.sink.delivered().empty());
  CHECK(h.StopNow() == 0);
}

// A started pipeline over `lines` Xid lines with distinct keys (no
// suppression), one record a batch, one batch queued, and an unreachable
// sink of capacity 2 that has already refused a few events.
std::unique_ptr<Harness> StartFullSink(int lines) {
  Pipeline::Options options = Harness::Defaults();
  options.max_batch_records = 1;
  options.max_queued_batches = 1;
  auto h = std::make_unique<Harness>(options, /*sink_capacity=*/2);
  h->sink.Disconnect();
  for (int i = 0; i < lines; ++i) h->source->Add(XidLine(i));
  h->pipeline->Start();
  REQUIRE(h->Wait([&] { return h->sink.full_rejections() > 3; }));
  return h;
}

TEST_CASE("a full sink makes the source wait, and nothing is lost when it drains") {
  std::unique_ptr<Harness> full = StartFullSink(100);
  Harness& h = *full;
  // 2 in the sink, 1 being retried, 1 queued, 1 in the reader's hands.
  CHECK(h.source->read_count() <= 6);
  CHECK(h.source->pending() >= 94);
  CHECK(h.source->committed().empty());

  h.sink.Connect();
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:100"; }));
  CHECK(h.sink.delivered().size() == 100);
  CHECK(h.StopNow() == 0);
}

TEST_CASE("stop drains what was read, flushes until the deadline and reports undelivered") {
  Harness h;
  SUBCASE("broker unreachable: every event is reported, no checkpoint moves") {
    h.sink.Disconnect();
    h.pipeline->Start();
    for (int i = 0; i < 5; ++i) h.source->Add(XidLine(i));
    REQUIRE(h.Wait([&] { return h.sink.queued() == 5; }));
    CHECK(h.pipeline->Stop(h.clock.MonotonicNow() + milliseconds(50)) == 5);
    CHECK(h.source->committed().empty());
    CHECK(h.source->saved().empty());
  }
  SUBCASE("broker reachable: all delivered, the last cursor is saved") {
    h.pipeline->Start();
    for (int i = 0; i < 5; ++i) h.source->Add(XidLine(i));
    h.source->Add("trailing harmless line");
    REQUIRE(h.Wait([&] { return h.source->read_count() == 6; }));
    CHECK(h.StopNow() == 0);
    CHECK(h.source->saved() == "fake:6");
    CHECK(h.sink.delivered().size() == 5);
  }
}

// The shutdown deadline is in the pipeline's Clock: with the broker gone and
// the sink full, Stop() keeps retrying until that clock reaches the deadline,
// then reports every event it read as undelivered and commits none.
TEST_CASE("stop retries a full sink until the pipeline's clock reaches the deadline") {
  std::unique_ptr<Harness> full = StartFullSink(20);
  Harness& h = *full;

  std::atomic<bool> stopped{false};
  std::size_t undelivered = 0;
  std::jthread stopper([&] {
    undelivered = h.pipeline->Stop(h.clock.MonotonicNow() + seconds(5));
    stopped = true;
  });
  std::this_thread::sleep_for(milliseconds(200));  // real time passes, the clock does not
  CHECK_FALSE(stopped.load());
  h.clock.Advance(seconds(6));
  stopper.join();
  CHECK(undelivered == h.source->read_count());
  CHECK(h.source->committed().empty());
}

std::uint64_t LinesCovered(const std::vector<FaultEvent>& events) {
  std::uint64_t n = 0;
  for (const FaultEvent& e : events) n += 1 + e.suppressed;
  return n;
}

TEST_CASE("repeats within the window fold into one follow-up carrying the count") {
  Pipeline::Options options = Harness::Defaults();
  options.suppression.window = seconds(60);
  Harness h(options);
  h.pipeline->Start();
  for (int i = 0; i < 1000; ++i) h.source->Add(XidLine(0x3b));
  h.source->Add(XidLine(0x3c));  // another key: published at once
  REQUIRE(h.Wait([&] { return h.source->read_count() == 1001 && h.sink.delivered().size() == 2; }));
  REQUIRE(h.Wait([&] { return h.metrics.events_suppressed.value() == 999; }));
  // The first is delivered, but the 999 folded repeats are not: the checkpoint
  // stays at the first record.
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:1"; }));
  CHECK_FALSE(Contains(h.source->committed(), "fake:2"));

  h.clock.Advance(seconds(61));
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 3; }));
  const FaultEvent follow_up = h.sink.delivered()[2];
  CHECK(follow_up.suppressed == 998);  // it is the 999th repeat itself
  CHECK(follow_up.fields.at("pci") == "0000:3b:00");
  CHECK(follow_up.id == MakeEventId("gpu-1", "fake", "fake:1000", "test.xid"));
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:1001"; }));
  CHECK(LinesCovered(h.sink.delivered()) == 1001);
  CHECK(h.StopNow() == 0);
}

TEST_CASE("a flood is cut into follow-ups of max_folded, and stop sends the rest") {
  Pipeline::Options options = Harness::Defaults();
  options.suppression.window = seconds(60);
  options.suppression.max_folded = 100;
  Harness h(options);
  h.pipeline->Start();
  for (int i = 0; i < 350; ++i) h.source->Add(XidLine(7));
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 4; }));  // 1 + 3 x 100
  CHECK(h.StopNow() == 0);
  const auto events = h.sink.delivered();
  REQUIRE(events.size() == 5);        // the last 49 repeats went out at stop
  CHECK(events[1].suppressed == 99);  // 100 repeats: the event and 99 more
  CHECK(events[4].suppressed == 48);
  CHECK(LinesCovered(events) == 350);
  CHECK(h.source->saved() == "fake:350");
}

// Commits advance in read order, and a window's first folded repeat is held
// until its follow-up is delivered: every later line of the source waits
// behind it. Without an early follow-up the reader stops at
// max_uncommitted_records for the rest of the window (issue 12, item 5).
TEST_CASE("an open suppression window does not stall its source's reader") {
  Pipeline::Options options = Harness::Defaults();
  options.suppression.window = seconds(60);
  options.max_uncommitted_records = 1000;
  options.suppression_flush_records = 300;
  Harness h(options);
  const auto start = h.clock.MonotonicNow();
  h.pipeline->Start();
  // One repeat every 100 lines: each window's hold has lines behind it at once.
  std::uint64_t faults = 0;
  std::uint64_t lines = 0;
  for (int block = 0; block < 40; ++block) {
    h.source->Add(XidLine(0x3b));
    ++faults;
    for (int i = 0; i < 99; ++i) h.source->Add("kernel: harmless line " + std::to_string(i));
    lines += 100;
  }
  const std::string last = "fake:" + std::to_string(lines);
  // Every line is read and committed well inside the 60 s window (the
  // harness moves the fake clock 1 ms a poll).
  REQUIRE(h.Wait([&] { return h.source->read_count() == lines; }));
  // Commits pass the open window: at most the bound and a batch wait behind it.
  const auto position = [](const std::string& cursor) {
    return cursor.empty() ? 0 : std::stoull(cursor.substr(5));  // "fake:N"
  };
  REQUIRE(h.Wait([&] { return position(h.source->saved()) + 300 + 256 >= lines; }));
  CHECK(h.clock.MonotonicNow() - start < seconds(30));
  const auto early = h.sink.delivered();
  CHECK(early.size() >= 3);  // the first occurrence and early follow-ups
  CHECK(early[0].suppressed == 0);
  for (std::size_t i = 1; i < early.size(); ++i) {
    CHECK(early[i].fields.at("pci") == "0000:3b:00");
    // Each follow-up is the last of the repeats it folds: ids name later lines.
    CHECK(early[i].id != early[i - 1].id);
  }
  // The window's end sends the rest; nothing is lost and the order is kept.
  h.clock.Advance(seconds(61));
  REQUIRE(h.Wait([&] { return LinesCovered(h.sink.delivered()) == faults; }));
  REQUIRE(h.Wait([&] { return h.source->saved() == last; }));
  const auto committed = h.source->committed();
  for (std::size_t i = 1; i < committed.size(); ++i) {
    CHECK(position(committed[i - 1]) < position(committed[i]));
  }
  CHECK(h.metrics.events_suppressed.value() == faults - 1);
  CHECK(h.StopNow() == 0);
  CHECK(LinesCovered(h.sink.delivered()) == faults);
}

// Evidence: a tainting event carries the lines its source read just before
// it (the AER lines before an Xid 79), across batch boundaries, bounded.
TEST_CASE("a tainting event carries the lines read just before it, across batches") {
  Pipeline::Options options = Harness::Defaults();
  options.max_batch_records = 3;  // the 10 lines before the fault span 4 batches
  Harness h(options);
  for (int i = 1; i <= 10; ++i) h.source->Add("pcieport AER line " + std::to_string(i));
  h.source->Add(XidLine(0x3b));
  h.pipeline->Start();
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 1; }));
  std::vector<std::string> want;
  for (int i = 3; i <= 10; ++i) want.push_back("pcieport AER line " + std::to_string(i));
  CHECK(h.sink.delivered()[0].evidence == want);
  CHECK(h.StopNow() == 0);
}

TEST_CASE("events that do not taint, and evidence_lines 0, carry no evidence") {
  Pipeline::Options options = Harness::Defaults();
  SUBCASE("an event rule") {
    Harness h(options);
    h.holder.Replace(CompileTestPack(R"(pack: agent-test
version: 1
defaults: {sources: [kernel], category: application}
rules:
  - id: test.event
    pattern: 'NVRM: Xid'
    severity: warning
    action: event
)"));
    h.source->Add("line before");
    h.source->Add(XidLine(1));
    h.pipeline->Start();
    REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 1; }));
    CHECK(h.sink.delivered()[0].rule == "test.event");
    CHECK(h.sink.delivered()[0].evidence.empty());
    CHECK(h.StopNow() == 0);
  }
  SUBCASE("evidence turned off") {
    options.evidence_lines = 0;
    Harness h(options);
    h.source->Add("line before");
    h.source->Add(XidLine(1));
    h.pipeline->Start();
    REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 1; }));
    CHECK(h.sink.delivered()[0].evidence.empty());
    CHECK(h.StopNow() == 0);
  }
}

TEST_CASE("matches of ignore rules are counted but never published") {
  Harness h;
  h.pipeline->Start();
  h.source->Add("harmless noise from a driver");
  h.source->Add("harmless noise from a driver");
  REQUIRE(h.Wait([&] { return h.source->saved() == "fake:2"; }));
  CHECK(h.sink.published() == 0);
  CHECK(h.metrics.events_ignored.value() == 2);
  CHECK(h.registry.CounterValue("faultline_agent_matches_total", {{"rule", "test.noise"}}) == 2);
  CHECK(h.StopNow() == 0);
}

TEST_CASE("a finite source is read to its end and the pipeline becomes idle") {
  Harness h;
  for (int i = 0; i < 10; ++i) h.source->Add(i % 2 ? XidLine(i) : "harmless");
  h.source->Finish();
  h.pipeline->Start();
  REQUIRE(h.Wait([&] { return PipelineTesting::Idle(*h.pipeline); }));
  CHECK(h.pipeline->healthy());
  CHECK(h.sink.delivered().size() == 5);
  CHECK(h.StopNow() == 0);
  CHECK(h.source->saved() == "fake:10");
}

TEST_CASE("a transient read error is retried and counted") {
  Pipeline::Options options = Harness::Defaults();
  options.read_error_backoff = milliseconds(5);
  Harness h(options);
  h.source->FailNextRead(UnavailableError("EIO"));
  h.pipeline->Start();
  h.source->Add(XidLine(1));
  REQUIRE(h.Wait([&] { return h.sink.delivered().size() == 1; }));
  CHECK(h.registry.CounterValue("faultline_agent_source_read_errors_total", {{"source", "fake"}}) ==
        1);
  CHECK(h.pipeline->healthy());
  CHECK(h.StopNow() == 0);
}

// Issue 11.4: 64 batches of 256 records of 250 KiB would be 4 GiB queued.
TEST_CASE("the batch queue is bounded in bytes: a push waits until the bytes fit") {
  BoundedQueue<int> q(/*capacity=*/10, /*max_cost=*/100);
  REQUIRE(q.Push(1, 60));
  std::atomic<bool> pushed{false};
  std::jthread pusher([&] {
    q.Push(2, 60);  // 120 > 100: waits for the first to leave
    pushed = true;
  });
  CHECK(q.cost() == 60);
  CHECK(q.Pop(milliseconds(5000)) == std::optional<int>(1));
  CHECK(q.Pop(milliseconds(5000)) == std::optional<int>(2));  // it got in once 1 left
  pusher.join();
  CHECK(pushed);
  CHECK(q.cost() == 0);
  // One item above the bound still goes through alone (nothing is dropped).
  REQUIRE(q.Push(3, 500));
  CHECK(q.cost() == 500);
  CHECK(q.Pop(milliseconds(0)) == std::optional<int>(3));
}

}  // namespace
}  // namespace faultline
