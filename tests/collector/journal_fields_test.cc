// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/journal_fields.h"

#include <doctest/doctest.h>

namespace faultline {
namespace {

JournalEntry Entry(std::initializer_list<std::string_view> data, std::uint64_t usec = 0) {
  JournalEntry e;
  for (std::string_view d : data) REQUIRE(AddJournalField(d, e));
  e.realtime_usec = usec;
  return e;
}

TEST_CASE("a kernel entry that journald split into NVRM and MESSAGE is rebuilt as one line") {
  LogRecord r = AssembleJournalRecord(
      Entry({"_TRANSPORT=kernel", "SYSLOG_IDENTIFIER=NVRM",
             "MESSAGE=Xid (PCI:0000:03:00): 79, pid=0, GPU has fallen off the bus.", "PRIORITY=4"},
            1'700'000'000'123'456));
  CHECK(r.text == "NVRM: Xid (PCI:0000:03:00): 79, pid=0, GPU has fallen off the bus.");
  CHECK(r.origin == Origin::kKernel);
  CHECK(r.source == "journal");
  CHECK(r.labels.at("transport") == "kernel");
  CHECK(r.labels.at("identifier") == "NVRM");
  CHECK(r.labels.at("priority") == "4");
  CHECK(r.labels.count("unit") == 0);
  CHECK(std::chrono::duration_cast<std::chrono::microseconds>(r.time.time_since_epoch()).count() ==
        1'700'000'000'123'456);
}

TEST_CASE("a user-space entry carries unit and pid and has journal origin") {
  LogRecord r = AssembleJournalRecord(
      Entry({"_TRANSPORT=stdout", "_SYSTEMD_UNIT=kubelet.service", "SYSLOG_IDENTIFIER=kubelet",
             "_PID=812", "MESSAGE=E1122 eviction manager: must evict"}));
  CHECK(r.text == "kubelet: E1122 eviction manager: must evict");
  CHECK(r.origin == Origin::kJournal);
  CHECK(r.labels.at("unit") == "kubelet.service");
  CHECK(r.labels.at("pid") == "812");
}

TEST_CASE("an entry without identifier is its message alone, minus one trailing newline") {
  CHECK(AssembleJournalRecord(Entry({"MESSAGE=hello\n"})).text == "hello");
  CHECK(AssembleJournalRecord(Entry({"MESSAGE=two\nlines"})).text == "two\nlines");
  CHECK(AssembleJournalRecord(Entry({"SYSLOG_IDENTIFIER=x"})).text == "x: ");
  CHECK(AssembleJournalRecord(Entry({})).text.empty());
}

TEST_CASE("binary message bytes are escaped and valid UTF-8 is kept") {
  std::string msg = "MESSAGE=bad \xff\xfe ok \xc3\xa9 nul ";
  msg.push_back('\0');
  msg += "end";
  LogRecord r = AssembleJournalRecord(Entry({msg}));
  CHECK(r.text == std::string("bad \\xff\\xfe ok \xc3\xa9 nul ") + '\0' + "end");
  CHECK(EscapeInvalidUtf8("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(EscapeInvalidUtf8("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");
  CHECK(EscapeInvalidUtf8("\xe2\x82") == "\\xe2\\x82");  // truncated sequence
}

TEST_CASE("a datum without '=' or with an empty key is refused") {
  JournalEntry e;
  CHECK_FALSE(AddJournalField("MESSAGE", e));
  CHECK_FALSE(AddJournalField("=x", e));
  CHECK(e.fields.empty());
  CHECK(AddJournalField("K=a=b", e));
  CHECK(e.fields.at("K") == "a=b");
}

}  // namespace
}  // namespace faultline
