// SPDX-License-Identifier: Apache-2.0
// Hostile input to the matcher and the event contract (issue 14, item 4):
// each gets a clear error, a counted skip or a warning, never a crash.
// SECURITY.md ("Hostile input") lists where every other case is tested.
#include <cstdint>
#include <limits>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/time_format.h"
#include "matcher/input_line.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;

json ValidEvent() {
  FaultEvent e;
  e.id = "0f1e2d3c4b5a69780f1e2d3c4b5a6978";
  e.node = "gpu-17";
  e.source = "kmsg";
  e.origin = Origin::kKernel;
  e.rule = "nvidia.xid";
  e.severity = Severity::kCritical;
  e.action = Action::kTaint;
  e.log_time = *ParseRfc3339("2026-11-22T07:02:53Z");
  e.detected_time = e.log_time;
  return ToJson(e);
}

TEST_CASE("an event of a future or invalid schema is set aside, even one that would wrap an int") {
  // The tainter dead-letters kFailedPrecondition and counts it
  // (event_consumer_test: "a poison message goes to the dead-letter topic").
  // 4294967297 is 2^32 + 1: read as a 32-bit int it was schema 1.
  for (const char* schema : {"0", "-1", "2", "99", "4294967297", "9223372036854775807",
                             "18446744073709551615", "-9223372036854775808"}) {
    std::string text = ValidEvent().dump();
    const std::string one = "\"schema\":1";
    REQUIRE(text.find(one) != std::string::npos);
    text.replace(text.find(one), one.size(), std::string("\"schema\":") + schema);
    auto parsed = ParseFaultEvent(text);
    CAPTURE(schema);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().code() == StatusCode::kFailedPrecondition);
    CHECK(parsed.error().message().find(schema) != std::string::npos);
  }
  json j = ValidEvent();
  j["schema"] = 1.5;  // not an integer at all: malformed, not "future"
  CHECK(ParseFaultEvent(j.dump()).error().code() == StatusCode::kInvalidArgument);
  CHECK(ParseFaultEvent(ValidEvent().dump()).ok());
}

TEST_CASE("a time the clock cannot hold is refused, not wrapped into another time") {
  // Found by fault_event_fuzz: log_time "4052-11-22T07:02:53Z" overflowed
  // the conversion to nanoseconds (undefined behaviour) and came back as a
  // time in 1467, which would misplace the event in every window.
  for (const char* text :
       {"4052-11-22T07:02:53Z", "1014-11-22T07:02:53Z", "9999-12-31T23:59:59Z",
        "0000-01-01T00:00:00Z", "2262-04-12T00:00:00Z", "1677-09-21T00:00:00Z"}) {
    CAPTURE(text);
    CHECK_FALSE(ParseRfc3339(text).has_value());
  }
  for (const char* text :
       {"2262-04-11T00:00:00Z", "1677-09-22T00:00:00Z", "1970-01-01T00:00:00Z"}) {
    CAPTURE(text);
    auto t = ParseRfc3339(text);
    REQUIRE(t.has_value());
    CHECK(FormatRfc3339(*t).substr(0, 19) == std::string_view(text).substr(0, 19));
  }
  json j = ValidEvent();
  j["log_time"] = "4052-11-22T07:02:53.179000Z";
  auto parsed = ParseFaultEvent(j.dump());
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code() == StatusCode::kInvalidArgument);
  CHECK(parsed.error().message().find("log_time") != std::string::npos);

  // The same overflow in `faultline scan`'s readers: the line is read, without a time.
  auto journal = ParseJournalJsonLine(
      R"({"_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79","__REALTIME_TIMESTAMP":"18446744073709551615"})");
  REQUIRE(journal);
  CHECK(journal->text == "NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK_FALSE(journal->time.has_value());
  auto dmesg = ParseDmesgLine("[Fri Dec 31 23:59:59 9999] NVRM: Xid (PCI:0000:3b:00): 79");
  REQUIRE(dmesg);
  CHECK(dmesg->text == "NVRM: Xid (PCI:0000:3b:00): 79");
  CHECK_FALSE(dmesg->time.has_value());
}

TEST_CASE("event JSON that is not UTF-8, has NUL bytes or is huge is refused or bounded") {
  CHECK(ParseFaultEvent(std::string("{\"schema\":1,\"id\":\"\xff\xfe\"}")).error().code() ==
        StatusCode::kInvalidArgument);
  CHECK(ParseFaultEvent(std::string("{\"schema\":1\0}", 13)).error().code() ==
        StatusCode::kInvalidArgument);
  // 8 MiB of nesting: nlohmann's parser is iterative, so this is an error,
  // not a stack overflow.
  CHECK(ParseFaultEvent(std::string(8u << 20, '[')).error().code() == StatusCode::kInvalidArgument);
  // A valid event carrying a 2 MiB message is accepted; the agent would have
  // cut it, and re-serialising cuts it to the bound.
  json j = ValidEvent();
  j["message"] = std::string(2u << 20, 'x');
  auto parsed = ParseFaultEvent(j.dump());
  REQUIRE(parsed.ok());
  CHECK(ToJson(*parsed)["message"].get<std::string>().size() == FaultEvent::kMaxMessageBytes);
}

TEST_CASE(
    "a line over 1 MiB with NUL bytes and invalid UTF-8 is matched, and its event is "
    "valid JSON within the bound") {
  Diagnostics diags;
  SourceTexts texts;
  auto set = LoadRules({}, {}, diags, texts);  // the built-in packs
  REQUIRE(set);
  std::string junk;
  static constexpr char kJunk[] = "\xff\xfe\x00\x01\xc3 binary ";  // 13 bytes and a NUL
  while (junk.size() < (3u << 19)) junk += std::string(kJunk, sizeof kJunk - 1);
  const std::string line =
      junk + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.";
  REQUIRE(line.size() > (1u << 20));
  const std::string buffer = "first line\n" + line + "\nlast line\n";

  std::vector<RuleMatch> found;
  std::uint64_t found_on = 0;
  set->ScanBuffer(buffer, Origin::kKernel,
                  [&](std::string_view, std::uint64_t line_no, std::vector<RuleMatch>& matches) {
                    for (RuleMatch& m : matches) {
                      if (m.rule->id == "nvidia.xid") {
                        found.push_back(m);
                        found_on = line_no;
                      }
                    }
                  });
  REQUIRE(found.size() == 1);
  CHECK(found_on == 2);

  LogRecord record;
  record.source = "file";
  record.origin = Origin::kKernel;
  record.text = line;
  record.cursor = "1";
  const FaultEvent event =
      MakeFaultEvent(found[0], record, "gpu-17", "boot", std::chrono::system_clock::now());
  const std::string wire = SerializeFaultEvent(event);
  CHECK(json::accept(wire));  // invalid UTF-8 replaced, NUL escaped
  CHECK(wire.size() < 8 * 1024);
  auto back = ParseFaultEvent(wire);
  REQUIRE(back.ok());
  CHECK(back->message.size() <= FaultEvent::kMaxMessageBytes);
  CHECK(back->fields.at("xid") == "79");

  // The CLI's line reader takes it as a plain line, whole.
  const InputLine parsed = ParseInputLine(line);
  CHECK(parsed.format == LineFormat::kPlain);
  CHECK(parsed.text.size() == line.size());
}

TEST_CASE("a catch-all rule is a W202 warning: its regex would run on every line") {
  for (const char* pattern : {"'.*'", "'(?s).+'", "'^'", "'(?i)[a-z]'"}) {
    Loaded l = LoadPack(std::string(R"(pack: local
version: 1
rules:
  - id: local.everything
    pattern: )") + pattern +
                        R"(
    sources: [pod]
)");
    CAPTURE(pattern);
    CHECK(l.set != nullptr);  // a warning, not an error: the pack loads
    CHECK(l.Has("W202"));
    CHECK(l.Message("W202").find("local.everything") != std::string::npos);
  }
}

TEST_CASE("a regex over the RE2 memory budget is an error diagnostic, not a crash") {
  const std::string pack = R"(pack: local
version: 1
rules:
  - id: local.big
    pattern: '(?P<a>[a-z]{1,60}) (?P<b>[0-9]{1,60}) (?P<c>\w{1,60}) ends'
    sources: [kernel]
)";
  CompileOptions tiny;
  tiny.max_memory_bytes = 2048;    // far below what the Set needs
  tiny.max_program_size = 100000;  // let the pattern through the size check
  Loaded l = LoadPack(pack, tiny);
  CHECK(l.set == nullptr);
  CHECK(l.diags.has_errors());
  bool named = false;
  for (const Diagnostic& d : l.diags.all()) {
    if (d.code == "E104" || d.code == "E111") named = true;
  }
  CHECK(named);

  // Nested repeats that backtracking engines take exponential time on: RE2
  // matches in linear time, and the default size limit still applies.
  Loaded nested = LoadPack(R"(pack: local
version: 1
rules:
  - id: local.nested
    pattern: '^(a+)+$'
    sources: [kernel]
)");
  REQUIRE(nested.set);
  CHECK(MatchLine(*nested.set, std::string(1u << 20, 'a') + "b").empty());
  CHECK(MatchLine(*nested.set, std::string(1u << 20, 'a')).size() == 1);
}

}  // namespace
}  // namespace faultline
