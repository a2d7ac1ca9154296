// SPDX-License-Identifier: Apache-2.0
// The shared vocabulary: status, time formats, durations, the event schema, metrics.
#include <array>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "base/fault_event.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/status.h"
#include "base/time_format.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("Result carries a value or the status saying why there is none") {
  Result<int> good = 7;
  Result<int> bad = UnavailableError("broker down");
  CHECK(good.has_value());
  CHECK(*good == 7);
  CHECK_FALSE(bad.has_value());
  CHECK(bad.error().code() == StatusCode::kUnavailable);
  CHECK(bad.error().ToString() == "unavailable: broker down");
}

TEST_CASE("RFC 3339 parses containerd's trimmed and CRI-O's 9-digit forms alike") {
  auto containerd = ParseRfc3339("2026-11-22T07:02:53.17905Z");
  auto crio = ParseRfc3339("2026-11-22T07:02:53.179050000+00:00");
  auto offset = ParseRfc3339("2026-11-22T09:02:53.17905+02:00");
  REQUIRE(containerd);
  REQUIRE(crio);
  REQUIRE(offset);
  CHECK(*containerd == *crio);
  CHECK(*containerd == *offset);
  CHECK(FormatRfc3339(*containerd) == "2026-11-22T07:02:53.179050Z");
  CHECK_FALSE(ParseRfc3339("2026-11-22 07:02:53Z"));
  CHECK_FALSE(ParseRfc3339("2026-11-22T07:02:53"));
  CHECK_FALSE(ParseRfc3339("2026-13-22T07:02:53Z"));
}

TEST_CASE("durations read as rule packs write them") {
  CHECK(ParseDuration("90s") == milliseconds(90'000));
  CHECK(ParseDuration("1h30m") == milliseconds(5'400'000));
  CHECK(ParseDuration("7d") == milliseconds(7 * 86'400'000LL));
  CHECK(ParseDuration("250ms") == milliseconds(250));
  CHECK_FALSE(ParseDuration("10"));
  CHECK_FALSE(ParseDuration("ten minutes"));
  CHECK_FALSE(ParseDuration(""));
  CHECK(FormatDuration(milliseconds(5'400'000)) == "1h30m");
  CHECK(FormatDuration(milliseconds(0)) == "0s");
}

// Issue 11.10: "1000000000d" repeated summed past INT64_MAX milliseconds
// (undefined behaviour), and 10^9 days, parsed fine, overflow the
// nanosecond clocks they are added to.
TEST_CASE("durations beyond the maximum are refused with a clear error, never overflow") {
  CHECK(ParseDuration("3650d") == milliseconds(3650LL * 86'400'000LL));
  CHECK_FALSE(ParseDuration("3650d1ms"));
  CHECK_FALSE(ParseDuration("1000000000d"));
  std::string many;
  for (int i = 0; i < 200; ++i) many += "1000000000d";
  CHECK_FALSE(ParseDuration(many));
  CHECK_FALSE(ParseDuration("99999999999999999999s"));
  Result<milliseconds> huge = ParseDurationOrError("106752d");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().message() == "'106752d' is longer than the maximum, 3650d (10 years)");
  CHECK(ParseDurationOrError("10").error().message() ==
        "'10': a number needs a unit (ms, s, m, h, d), e.g. 90s");
  CHECK(ParseDurationOrError("5x").error().message() ==
        "'5x': unknown unit 'x' (use ms, s, m, h, d)");
  CHECK(ParseDurationOrError("").error().message() == "empty duration");
}

FaultEvent SampleEvent() {
  FaultEvent e;
  e.node = "gpu-17";
  e.source = "kmsg";
  e.origin = Origin::kKernel;
  e.rule = "nvidia.xid";
  e.pack = "nvidia-xid";
  e.category = "hardware";
  e.severity = Severity::kCritical;
  e.action = Action::kTaint;
  e.summary = "Xid 79: GPU has fallen off the bus";
  e.fields = {{"xid", "79"}, {"pci", "0000:3b:00"}};
  e.message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.";
  e.log_time = *ParseRfc3339("2026-11-22T07:02:53.179Z");
  e.detected_time = *ParseRfc3339("2026-11-22T07:02:53.200Z");
  e.labels = {{"priority", "4"}};
  e.id = MakeEventId(e.node, e.source, "boot-1:42", e.rule);
  e.threshold = EventThreshold{5, seconds(86400), {"pci"}};
  e.expire = seconds(3600);
  return e;
}

TEST_CASE("an event survives a JSON round trip field for field") {
  const FaultEvent e = SampleEvent();
  auto back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back.has_value());
  CHECK(back->id == e.id);
  CHECK(back->node == "gpu-17");
  CHECK(back->origin == Origin::kKernel);
  CHECK(back->severity == Severity::kCritical);
  CHECK(back->action == Action::kTaint);
  CHECK(back->fields == e.fields);
  CHECK(back->labels == e.labels);
  CHECK(back->log_time == e.log_time);
  CHECK(back->threshold == e.threshold);
  CHECK(back->expire == seconds(3600));
  CHECK(ToJson(*back)["schema"] == 1);
}

// Found by fault_event_fuzz: a producer may write more fractional digits
// than the schema's microseconds; the event read must be the one written
// back, or the tainter's copy and the re-read one disagree on its times.
TEST_CASE("event times are read at the microseconds they are written with") {
  nlohmann::json j = ToJson(SampleEvent());
  j["log_time"] = "2026-11-22T07:02:53.1790001Z";
  j["detected_time"] = "2026-11-22T07:02:53.181000999Z";
  auto first = ParseFaultEvent(j.dump());
  REQUIRE(first.has_value());
  auto again = ParseFaultEvent(SerializeFaultEvent(*first));
  REQUIRE(again.has_value());
  CHECK(again->log_time == first->log_time);
  CHECK(again->detected_time == first->detected_time);
  CHECK(FormatRfc3339(first->log_time) == "2026-11-22T07:02:53.179000Z");
}

TEST_CASE("event ids are stable for the same record and differ for another") {
  CHECK(MakeEventId("n", "kmsg", "b:1", "r") == MakeEventId("n", "kmsg", "b:1", "r"));
  CHECK(MakeEventId("n", "kmsg", "b:1", "r") != MakeEventId("n", "kmsg", "b:2", "r"));
  CHECK(MakeEventId("ab", "c", "", "") != MakeEventId("a", "bc", "", ""));
  CHECK(MakeEventId("n", "kmsg", "b:1", "r").size() == 32);
}

// The id's text is the wire contract (a re-sent event has the same id): two
// FNV-1a hashes of the parts, each part followed by a NUL, printed as
// "%016llx%016llx". Derived here byte by byte as the contract says, for
// parts of every length from 0 to 40 (a hash that takes bytes in blocks must
// still agree at every length).
TEST_CASE("event ids are the two FNV-1a hashes of the parts in lowercase hex") {
  const auto fnv = [](std::uint64_t h, std::initializer_list<std::string_view> parts) {
    for (std::string_view part : parts) {
      for (unsigned char c : part) h = (h ^ c) * 0x100000001b3ULL;
      h *= 0x100000001b3ULL;  // the NUL after the part
    }
    return h;
  };
  std::size_t checked = 0;
  for (std::size_t size = 0; size <= 40; ++size) {
    std::string cursor, rule;
    for (std::size_t i = 0; i < size; ++i) {
      cursor.push_back(static_cast<char>('0' + i % 10));
      rule.push_back(static_cast<char>(0x80 + i * 7 % 0x80));  // bytes past 0x7f too
    }
    const std::uint64_t a = fnv(0xcbf29ce484222325ULL, {"gpu-1", "kmsg", cursor, rule});
    const std::uint64_t b = fnv(0x84222325cbf29ce4ULL, {rule, cursor, "kmsg", "gpu-1"});
    char expected[33];
    std::snprintf(expected, sizeof(expected), "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    CHECK(MakeEventId("gpu-1", "kmsg", cursor, rule) == expected);
    ++checked;
  }
  CHECK(checked == 41);
}

// A scan writes ids through EventIdWriter, which keeps the hashes of the
// cursor's shared start: every id must be MakeEventId's, whatever changes
// from one event to the next (the rule, the line, the file, the node).
TEST_CASE("EventIdWriter writes MakeEventId's id for every event of a sequence") {
  EventIdWriter writer;
  std::vector<std::string> rules = {"nvidia.xid", "ib.phys-state", "r", ""};
  // More rules than EventIdWriter keeps states for: some take others' places.
  for (int r = 0; r < 96; ++r) rules.push_back("rule-" + std::to_string(r));
  const std::vector<std::string> files = {"/var/log/kern.log:", "/tmp/a.log:", ":", ""};
  std::size_t checked = 0;
  for (const std::string& node : {std::string("gpu-1"), std::string("")}) {
    for (const std::string& file : files) {
      for (int line = 1; line <= 60; ++line) {
        const std::string& rule =
            rules[static_cast<std::size_t>(node.empty() ? line * 7 % 4 : line * 13 % 100)];
        const std::string rest = std::to_string(line * 37);
        std::array<char, 32> id{};
        writer.Write(id, node, "file", file, rest, rule);
        CHECK(std::string(id.data(), id.size()) == MakeEventId(node, "file", file + rest, rule));
        // The same cursor split elsewhere gives the same id.
        writer.Write(id, node, "kmsg", "", file + rest, rule);
        CHECK(std::string(id.data(), id.size()) == MakeEventId(node, "kmsg", file + rest, rule));
        checked += 2;
      }
    }
  }
  CHECK(checked == 960);
}

// EventIdWriter compares the node, source, cursor start and rule with the
// ones its states are for, short ones a word at a time: one that differs in
// one byte, at any place, of any length up to 24, changed in place (the same
// address), must not be taken for the other.
TEST_CASE("EventIdWriter tells apart parts that differ in one byte anywhere") {
  EventIdWriter writer;
  std::size_t checked = 0;
  for (std::size_t size = 1; size <= 24; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      std::string node(size, 'n'), source(size, 's'), start(size, 'f'), rule(size, 'r');
      for (std::string* part : {&node, &source, &start, &rule}) {
        std::array<char, 32> id{};
        writer.Write(id, node, source, start, "7", rule);
        REQUIRE(std::string(id.data(), id.size()) == MakeEventId(node, source, start + "7", rule));
        (*part)[at] = 'x';
        writer.Write(id, node, source, start, "7", rule);
        CHECK(std::string(id.data(), id.size()) == MakeEventId(node, source, start + "7", rule));
        ++checked;
      }
    }
  }
  CHECK(checked == 4 * 300);
}

TEST_CASE("a malformed event is an error naming the key, never an exception") {
  CHECK(ParseFaultEvent("not json").error().code() == StatusCode::kInvalidArgument);
  CHECK(ParseFaultEvent("[1,2]").error().code() == StatusCode::kInvalidArgument);
  nlohmann::json j = ToJson(SampleEvent());
  j["severity"] = "apocalyptic";
  auto bad = ParseFaultEvent(j.dump());
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message().find("severity") != std::string::npos);
  j = ToJson(SampleEvent());
  j["schema"] = 99;
  CHECK(ParseFaultEvent(j.dump()).error().code() == StatusCode::kFailedPrecondition);
  j = ToJson(SampleEvent());
  j["suppressed"] = -3;
  CHECK_FALSE(ParseFaultEvent(j.dump()).has_value());
  j = ToJson(SampleEvent());
  j.erase("node");
  CHECK(ParseFaultEvent(j.dump()).error().message().find("node") != std::string::npos);
}

TEST_CASE("the message is cut to its bound without splitting a UTF-8 character") {
  std::string line(FaultEvent::kMaxMessageBytes - 1, 'x');
  line += "\xc3\xa9 tail";  // é straddles the bound
  FaultEvent e = SampleEvent();
  e.message = line;
  const std::string cut = ToJson(e)["message"];
  CHECK(cut.size() == FaultEvent::kMaxMessageBytes - 1);
}

// Evidence (the lines before a tainting fault) travels with the event to the
// tainter's Event and `explain`; it must come back as sent, and another
// writer's event must not carry more than the agent's bounds.
TEST_CASE("evidence survives a round trip and is held to its line, byte and count bounds") {
  FaultEvent e = SampleEvent();
  e.evidence = {"pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received",
                "nvidia 0000:3b:00.0: AER: can't recover (no error_detected callback)"};
  auto back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back.has_value());
  CHECK(back->evidence == e.evidence);
  CHECK(ToJson(e)["evidence"].size() == 2);
  CHECK(SerializeFaultEvent(e) == ToJson(e).dump());

  // 20 lines of 300 bytes: the newest 6 fit in 2048 bytes, oldest first.
  std::vector<std::string> many;
  many.reserve(20);
  for (int i = 0; i < 20; ++i) many.push_back(std::to_string(100 + i) + std::string(297, 'x'));
  const std::vector<std::string> kept = BoundEvidence(many);
  REQUIRE(kept.size() == 6);
  CHECK(kept.front().substr(0, 3) == "114");
  CHECK(kept.back().substr(0, 3) == "119");
  // Short lines: at most kMaxEvidenceLines of them.
  CHECK(BoundEvidence(std::vector<std::string>(20, "short")).size() ==
        FaultEvent::kMaxEvidenceLines);
  // A long line is cut on a UTF-8 boundary; invalid UTF-8 is replaced on the wire.
  std::string long_line(FaultEvent::kMaxEvidenceLineBytes - 1, 'y');
  long_line += "\xc3\xa9";
  CHECK(BoundEvidence({long_line}).at(0).size() == FaultEvent::kMaxEvidenceLineBytes - 1);
  e.evidence = {"bad \xff byte"};
  CHECK(ToJson(e)["evidence"][0] == "bad \xef\xbf\xbd byte");

  nlohmann::json j = ToJson(SampleEvent());
  j["evidence"] = many;
  auto bounded = ParseFaultEvent(j.dump());
  REQUIRE(bounded.has_value());
  CHECK(bounded->evidence == kept);
  j["evidence"] = "one line";
  auto wrong = ParseFaultEvent(j.dump());
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message().find("evidence") != std::string::npos);
}

// The agent's repeated errors (a failed checkpoint save, a read error, a
// rejected event) are logged at these occurrences only.
TEST_CASE("a repeated problem is logged at its 1st, 10th, 100th, ... occurrence") {
  std::vector<std::uint64_t> logged;
  for (std::uint64_t n = 0; n <= 1000; ++n) {
    if (LogThisOccurrence(n)) logged.push_back(n);
  }
  CHECK(logged == std::vector<std::uint64_t>{1, 10, 100, 1000});
  CHECK(LogThisOccurrence(10'000'000'000'000'000'000ULL));
}

TEST_CASE("metrics render in the Prometheus text format") {
  MetricsRegistry registry;
  registry.GetCounter("faultline_records_read_total", "Records read.", {{"source", "kmsg"}}).Inc(3);
  registry.GetGauge("faultline_queue_depth", "Batches queued.").Set(2);
  auto& h = registry.GetHistogram("faultline_delivery_seconds", "Latency.", {0.1, 1});
  h.Observe(0.05);
  h.Observe(5);
  const std::string text = registry.RenderPrometheus();
  CHECK(text.find("# TYPE faultline_records_read_total counter") != std::string::npos);
  CHECK(text.find("faultline_records_read_total{source=\"kmsg\"} 3\n") != std::string::npos);
  CHECK(text.find("faultline_queue_depth 2\n") != std::string::npos);
  CHECK(text.find("faultline_delivery_seconds_bucket{le=\"0.1\"} 1\n") != std::string::npos);
  CHECK(text.find("faultline_delivery_seconds_bucket{le=\"+Inf\"} 2\n") != std::string::npos);
  CHECK(text.find("faultline_delivery_seconds_count 2\n") != std::string::npos);
  CHECK(registry.CounterValue("faultline_records_read_total", {{"source", "kmsg"}}) == 3);
}

}  // namespace
}  // namespace faultline
