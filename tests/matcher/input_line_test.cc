// SPDX-License-Identifier: Apache-2.0
// The `faultline scan` input parsers: pure functions, one per format.
#include "matcher/input_line.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/time_format.h"
#include "matcher/journal_json_line.h"

namespace faultline {
namespace {

TEST_CASE("dmesg lines: seconds since boot, and dmesg -T wall times") {
  auto a = ParseDmesgLine("[ 5120.652191] NVRM: Xid (PCI:0000:3b:00): 79, pid=1912\r");
  REQUIRE(a);
  CHECK(a->format == LineFormat::kDmesg);
  CHECK(a->origin == Origin::kKernel);
  CHECK(a->text == "NVRM: Xid (PCI:0000:3b:00): 79, pid=1912");
  CHECK_FALSE(a->time);
  auto t = ParseDmesgLine("[Sun Nov 22 07:02:53 2026] mlx5_core 0000:5e:00.0: Link down");
  REQUIRE(t);
  CHECK(t->format == LineFormat::kDmesgTime);
  REQUIRE(t->time);
  CHECK(FormatRfc3339(*t->time) == "2026-11-22T07:02:53.000000Z");
  CHECK(t->text == "mlx5_core 0000:5e:00.0: Link down");
  CHECK_FALSE(ParseDmesgLine("[INFO] something"));
  CHECK_FALSE(ParseDmesgLine("[12.x] no"));
}

// What ParseDmesgLine did for every dmesg -T stamp before its fast path.
std::optional<std::chrono::system_clock::time_point> StrptimeTime(const std::string& stamp) {
  struct tm tm {};
  const char* end = strptime(stamp.c_str(), "%a %b %d %H:%M:%S %Y", &tm);
  if (!end || *end != '\0') return std::nullopt;
  const std::time_t t = timegm(&tm);
  // What system_clock holds (ParseDmesgLine's bound): about 1677 to 2262.
  constexpr std::time_t kMax =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::duration::max())
          .count() -
      1;
  if (t == -1 || t >= kMax || t <= -kMax) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

TEST_CASE("dmesg -T stamps read by hand give strptime's and timegm's time") {
  std::vector<std::string> stamps = {
      "Sun Nov 22 07:02:53 2026", "Mon Feb 29 23:59:59 2028",  // leap day
      "Tue Feb 29 00:00:00 2026",                              // rolls over to Mar 1
      "Wed Feb 31 12:00:00 2025", "Thu Dec 31 23:59:60 2026",  // leap second: next minute
      "Fri Jan 01 00:00:00 1970", "Sat Jan 01 00:00:00 1969", "Sun Mar 15 10:20:30 2262",
      "Mon Jun 09 01:02:03 9999", "Tue Apr 30 13:14:15 2000", "Wed Jul 04 08:00:00 0000",
      // not the exact layout: strptime reads them (or refuses them) as before
      "sun nov 22 07:02:53 2026", "Sunday November 22 07:02:53 2026", "Sun Nov  2 07:02:53 2026",
      "Sun Nov 22 7:02:53 2026", "Sun Nov 22 07:02:61 2026", "Sun Nov 00 07:02:53 2026",
      "Sun Nov 32 07:02:53 2026", "Sun Nov 22 24:00:00 2026", "Sun Xyz 22 07:02:53 2026",
      "Xyz Nov 22 07:02:53 2026", "Sun Nov 22 07:02:53 12026", "Sun Nov 22 07:02:53 26"};
  for (int month = 0; month < 12; ++month) {
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int day = 1; day <= 31; day += 3) {
      char stamp[32];
      std::snprintf(stamp, sizeof(stamp), "Sun %s %02d %02d:%02d:%02d %04d", kMonths[month], day,
                    (day * 7) % 24, (day * 13) % 60, (month * 11) % 60, 1999 + month * 3);
      stamps.emplace_back(stamp);
    }
  }
  for (const std::string& stamp : stamps) {
    CAPTURE(stamp);
    const auto expected = StrptimeTime(stamp);
    const auto got = ParseDmesgLine("[" + stamp + "] text");
    if (!got) {
      // strptime refused it too (a line that is not dmesg -T)
      CHECK_FALSE(StrptimeTime(stamp).has_value());
      continue;
    }
    CHECK(got->format == LineFormat::kDmesgTime);
    CHECK(got->time == expected);
  }
}

TEST_CASE("journalctl -o short: the kernel keeps its message, others become IDENT: MESSAGE") {
  auto k =
      ParseJournalShortLine("Nov 22 07:02:53 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x");
  REQUIRE(k);
  CHECK(k->origin == Origin::kKernel);
  CHECK(k->text == "NVRM: Xid (PCI:0000:3b:00): 79, x");
  auto u =
      ParseJournalShortLine("Nov  2 07:02:53 gpu-17 nv-fabricmanager[2211]: fatal error detected");
  REQUIRE(u);
  CHECK(u->origin == Origin::kJournal);
  CHECK(u->text == "nv-fabricmanager: fatal error detected");
  auto iso = ParseJournalShortLine("2026-11-22T07:02:53+0000 gpu-17 systemd[1]: Started x.");
  REQUIRE(iso);
  CHECK(iso->text == "systemd: Started x.");
  REQUIRE(iso->time);
  CHECK(FormatRfc3339(*iso->time) == "2026-11-22T07:02:53.000000Z");
  auto precise = ParseJournalShortLine("Nov 22 07:02:53.123456 gpu-17 kernel: hello");
  REQUIRE(precise);
  CHECK(precise->text == "hello");
  CHECK_FALSE(ParseJournalShortLine("-- Boot 6b1f --"));
  CHECK_FALSE(ParseJournalShortLine("Nov 22 07:02:53 gpu-17 no tag here"));
}

TEST_CASE("journalctl -o json: _TRANSPORT decides the origin, byte-array messages decode") {
  auto k = ParseJournalJsonLine(
      R"({"_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid 79","SYSLOG_IDENTIFIER":"kernel","__REALTIME_TIMESTAMP":"1795330973179050"})");
  REQUIRE(k);
  CHECK(k->origin == Origin::kKernel);
  CHECK(k->text == "NVRM: Xid 79");
  REQUIRE(k->time);
  CHECK(FormatRfc3339(*k->time) == "2026-11-22T07:02:53.179050Z");
  // A user-space process calling itself "kernel" is still the journal.
  auto fake = ParseJournalJsonLine(
      R"({"_TRANSPORT":"syslog","MESSAGE":"NVRM: Xid 79","SYSLOG_IDENTIFIER":"kernel"})");
  REQUIRE(fake);
  CHECK(fake->origin == Origin::kJournal);
  CHECK(fake->text == "kernel: NVRM: Xid 79");
  auto bytes =
      ParseJournalJsonLine(R"({"_TRANSPORT":"stdout","MESSAGE":[104,105,255],"_COMM":"app"})");
  REQUIRE(bytes);
  CHECK(bytes->text == "app: hi\xff");
  CHECK_FALSE(ParseJournalJsonLine(R"({"no_message":1})"));
  CHECK_FALSE(ParseJournalJsonLine("{not json"));
}

// simdjson reads the lines nlohmann used to read alone (3/4 of a scan of
// journalctl -o json); what simdjson refuses goes to nlohmann. Every line
// here reads the same both ways, the edge cases included.
TEST_CASE("journalctl -o json: the fast reading equals nlohmann's on every kind of line") {
  const std::vector<std::string> lines = {
      R"({"MESSAGE":"a","_TRANSPORT":"kernel","__REALTIME_TIMESTAMP":"1795330973000000"})",
      R"({"MESSAGE":[104,105,255],"_COMM":"app"})",
      R"({"MESSAGE":[104,256]})",                               // not a byte
      R"({"MESSAGE":[104,-1]})",                                // not a byte
      R"({"MESSAGE":[104,1.0]})",                               // a double is not a byte
      R"({"MESSAGE":[104,-0]})",                                // nor is -0 (libFuzzer found it)
      R"({"MESSAGE":[]})",                                      // no bytes: an empty message
      R"({"MESSAGE":"first","MESSAGE":"last"})",                // the last of a repeated key
      R"({"MESSAGE":"x","MESSAGE":5})",                         // ... even of the wrong type
      R"({"MESSAGE":"x","n":123456789012345678901234567890})",  // past 64 bits
      R"({"MESSAGE":"x","deep":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]})",
      R"({"MESSAGE":"a\u0000b\n\"c\"","SYSLOG_IDENTIFIER":"id"})",
      R"({"MESSAGE":null,"_TRANSPORT":"kernel"})",
      R"({"MESSAGE":"x"} trailing)",
      R"({"MESSAGE":"x"}   )",
      R"(["MESSAGE","x"])",
      "{\"MESSAGE\":\"\xff\"}",  // not UTF-8
      "{\"MESSAGE\":\"caf\xc3\xa9\"}",
      R"({"MESSAGE":)",
      "{",
  };
  for (const std::string& line : lines) {
    CHECK_MESSAGE(ReadJournalJsonFields(line) == ReadJournalJsonFieldsNlohmann(line), line);
  }
  auto last = ReadJournalJsonFields(R"({"MESSAGE":"first","MESSAGE":"last"})");
  REQUIRE(last);
  CHECK(last->message == "last");
  auto big = ReadJournalJsonFields(R"({"MESSAGE":"x","n":123456789012345678901234567890})");
  REQUIRE(big);
  CHECK(big->message == "x");
  CHECK(ReadJournalJsonFields(R"({"MESSAGE":[104,256]})")->message == std::nullopt);
  CHECK_FALSE(ReadJournalJsonFields(R"({"MESSAGE":"x"} trailing)"));
}

TEST_CASE("CRI pod-log lines: stream, partial flag, time and message") {
  auto f = ParseCriInputLine("2026-11-22T07:02:53.17905Z stderr F NCCL WARN boom");
  REQUIRE(f);
  CHECK(f->origin == Origin::kPod);
  CHECK(f->stream == "stderr");
  CHECK_FALSE(f->partial);
  CHECK(f->text == "NCCL WARN boom");
  REQUIRE(f->time);
  CHECK(FormatRfc3339(*f->time) == "2026-11-22T07:02:53.179050Z");
  auto p = ParseCriInputLine("2026-11-22T07:02:53.178710000+02:00 stdout P part one ");
  REQUIRE(p);
  CHECK(p->partial);
  CHECK(p->text == "part one ");
  auto empty = ParseCriInputLine("2026-11-22T07:02:53Z stdout F");
  REQUIRE(empty);
  CHECK(empty->text.empty());
  CHECK_FALSE(ParseCriInputLine("2026-11-22T07:02:53Z stdin F x"));
  CHECK_FALSE(ParseCriInputLine("2026-11-22T07:02:53Z stdout X x"));
}

// Every member a rule or an event reads, compared.
void CheckSameLine(const InputLine& got, const InputLine& want) {
  CHECK(got.format == want.format);
  CHECK(got.text == want.text);
  CHECK(got.origin == want.origin);
  CHECK(got.time == want.time);
  CHECK(got.partial == want.partial);
  CHECK(got.stream == want.stream);
}

TEST_CASE("ParseInputLine into a reused line gives a fresh parse's line, whatever came before") {
  // Each format, with and without a time, and lines that one parser
  // starts on and another (or none) finishes: a member left from the line
  // before (a time, a stream, a partial flag) would show here.
  const std::vector<std::string> lines = {
      "2026-11-22T07:02:53.178710000+02:00 stdout P part one ",
      "2026-11-22T07:02:53.17905Z stderr F NCCL WARN boom",
      "plain line without a time\r",
      "[Sun Nov 22 07:02:53 2026] mlx5_core 0000:5e:00.0: Link down",
      "[ 5120.652191] NVRM: Xid 79",
      "Nov 22 07:02:53 gpu-17 kernel: NVRM: Xid 79",
      "Dec  2 07:02:53.123456 gpu-17 nv-fabricmanager[2211]: fatal",
      "2026-11-22T07:02:53+0000 gpu-17 systemd[1]: Started x.",
      "2026-11-22T07:02:53.5-0130 gpu-17 :no ident",
      R"({"MESSAGE":"hi","_TRANSPORT":"kernel","__REALTIME_TIMESTAMP":"1700000000000001"})",
      R"({"MESSAGE":"hi","SYSLOG_IDENTIFIER":"app"})",
      "{not json",
      "[INFO] bracketed",
      "2026-11-22T07:02:53Z stdin F not a stream",
      "Nov 22 07:02:53 gpu-17 no tag here",
      "",
  };
  for (const std::string& before : lines) {
    for (const std::string& line : lines) {
      CAPTURE(before);
      CAPTURE(line);
      InputLine reused;
      ParseInputLine(before, reused);
      ParseInputLine(line, reused);
      CheckSameLine(reused, ParseInputLine(line));
    }
  }
}

TEST_CASE("journalctl -o short: every month's name, and nothing else, starts a dated line") {
  const char* const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (const char* month : months) {
    CAPTURE(month);
    const auto parsed = ParseJournalShortLine(std::string(month) + " 22 07:02:53 h kernel: a");
    REQUIRE(parsed);
    CHECK(parsed->text == "a");
  }
  // A letter off, another case, a name cut short or run on.
  for (const char* not_month : {"Noz", "Mov", "nov", "NOV", "Juk", "Mai", "Se ", "Sept"}) {
    CAPTURE(not_month);
    CHECK_FALSE(ParseJournalShortLine(std::string(not_month) + " 22 07:02:53 h kernel: a"));
  }
}

TEST_CASE("journalctl -o short-iso: the zone's colon put in, for short and long stamps") {
  auto east = ParseJournalShortLine("2026-11-22T09:02:53.250+0200 gpu-17 kernel: a");
  REQUIRE(east);
  REQUIRE(east->time);
  CHECK(FormatRfc3339(*east->time) == "2026-11-22T07:02:53.250000Z");
  auto west = ParseJournalShortLine("2026-11-22T05:32:53-0130 gpu-17 kernel: a");
  REQUIRE(west);
  REQUIRE(west->time);
  CHECK(FormatRfc3339(*west->time) == "2026-11-22T07:02:53.000000Z");
  // A stamp longer than the parser's stack buffer (60 fractional digits;
  // RFC 3339 reads the first 9).
  const std::string long_stamp = "2026-11-22T09:02:53." + std::string(60, '7') + "+0200";
  auto long_one = ParseJournalShortLine(long_stamp + " gpu-17 kernel: a");
  REQUIRE(long_one);
  REQUIRE(long_one->time);
  CHECK(FormatRfc3339(*long_one->time) == "2026-11-22T07:02:53.777777Z");
  // Already RFC 3339: read as it is.
  auto colon = ParseJournalShortLine("2026-11-22T09:02:53+02:00 gpu-17 kernel: a");
  REQUIRE(colon);
  CHECK(colon->time == east->time.value() - std::chrono::milliseconds(250));
}

TEST_CASE("ParseInputLine detects each format and falls back to a plain line") {
  CHECK(ParseInputLine("[ 1.0] a").format == LineFormat::kDmesg);
  CHECK(ParseInputLine("Nov 22 07:02:53 h kernel: a").format == LineFormat::kJournalShort);
  CHECK(ParseInputLine(R"({"MESSAGE":"a"})").format == LineFormat::kJournalJson);
  CHECK(ParseInputLine("2026-11-22T07:02:53Z stdout F a").format == LineFormat::kCri);
  InputLine plain = ParseInputLine("NVRM: Xid 79\r");
  CHECK(plain.format == LineFormat::kPlain);
  CHECK(plain.origin == Origin::kAny);
  CHECK(plain.text == "NVRM: Xid 79");
  CHECK(ParseInputLine("").text.empty());
}

}  // namespace
}  // namespace faultline
