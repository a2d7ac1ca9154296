// SPDX-License-Identifier: Apache-2.0
// The `faultline scan` input parsers: pure functions, one per format.
#include "matcher/input_line.h"

#include <doctest/doctest.h>

#include "base/time_format.h"

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
