// SPDX-License-Identifier: Apache-2.0
// Journal source against real journal files written by
// systemd-journal-remote from generated export-format fixtures.
#include "collector/sources/journal_source.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/journal_fixture.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

// Unless told otherwise, each test writes its fixtures into T/j/ and keeps
// its state in T/state/.
struct JournalTest {
  TempDir tmp;
  JournalExportGenerator gen;
  std::string dir = tmp / "j";
  int writes = 0;

  JournalTest() { std::filesystem::create_directories(dir); }

  bool Write(const std::string& file = "a.journal") {
    return WriteJournal(dir + "/" + file, gen.Take(), tmp / ("export-" + std::to_string(writes++)));
  }

  JournalSource::Options Options() const {
    JournalSource::Options o;
    o.directory = dir;
    o.state_dir = tmp / "state";
    o.start = JournalSource::Start::kHead;
    return o;
  }

  std::unique_ptr<JournalSource> Open(const JournalSource::Options& o) {
    auto s = JournalSource::Open(o);
    REQUIRE_MESSAGE(s.ok(), s.error().message());
    return std::move(*s);
  }
};

std::vector<std::string> Texts(const std::vector<LogRecord>& records) {
  std::vector<std::string> t;
  t.reserve(records.size());
  for (const LogRecord& r : records) t.push_back(r.text);
  return t;
}

std::vector<std::string> Numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> t;
  for (int i = from; i < to; ++i) t.push_back(prefix + std::to_string(i));
  return t;
}

#define REQUIRE_JOURNAL_REMOTE()                                                            \
  if (!JournalRemoteAvailable()) {                                                          \
    MESSAGE("SKIPPED: " << kJournalRemote << " is not installed (systemd-journal-remote)"); \
    return;                                                                                 \
  }

TEST_CASE("every entry of a journal directory is read with its fields and cursor") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 20; ++i) t.gen.AddMessage("m" + std::to_string(i), "app");
  t.gen.Add({{"_TRANSPORT", "kernel"},
             {"PRIORITY", "4"},
             {"SYSLOG_IDENTIFIER", "NVRM"},
             {"MESSAGE", "Xid (PCI:0000:03:00): 79, pid=0, GPU has fallen off the bus."}});
  t.gen.Add({{"_TRANSPORT", "stdout"},
             {"_SYSTEMD_UNIT", "kubelet.service"},
             {"_PID", "812"},
             {"SYSLOG_IDENTIFIER", "kubelet"},
             {"MESSAGE", std::string("binary \xff\x01 tail\n")}});
  REQUIRE(t.Write());

  auto src = t.Open(t.Options());
  std::vector<LogRecord> got = ReadUntil(*src, 22, milliseconds(5000));
  REQUIRE(got.size() == 22);
  std::vector<std::string> want;
  want.reserve(22);
  for (int i = 0; i < 20; ++i) want.push_back("app: m" + std::to_string(i));
  want.push_back("NVRM: Xid (PCI:0000:03:00): 79, pid=0, GPU has fallen off the bus.");
  want.push_back("kubelet: binary \\xff\x01 tail");
  CHECK(Texts(got) == want);
  CHECK(got[20].origin == Origin::kKernel);
  CHECK(got[21].origin == Origin::kJournal);
  CHECK(got[21].labels.at("unit") == "kubelet.service");
  CHECK(got[21].labels.at("pid") == "812");
  CHECK(got[21].labels.at("transport") == "stdout");
  for (const LogRecord& r : got) CHECK_FALSE(r.cursor.empty());
  CHECK(got[0].time < got[1].time);
  const SourceStats s = src->stats();
  CHECK(s.records == 22);
  CHECK(s.parse_errors == 0);
  CHECK(s.lost == 0);
}

TEST_CASE("kernel-transport entries are skipped when the kmsg source is on") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 10; ++i) {
    t.gen.AddMessage("line " + std::to_string(i), i % 2 ? "kernel" : "app",
                     i % 2 ? "kernel" : "journal");
  }
  REQUIRE(t.Write());
  JournalSource::Options o = t.Options();
  o.skip_kernel_transport = true;
  auto src = t.Open(o);
  std::vector<LogRecord> got = ReadUntil(*src, 10, milliseconds(1000));
  CHECK(Texts(got) == std::vector<std::string>{"app: line 0", "app: line 2", "app: line 4",
                                               "app: line 6", "app: line 8"});
  CHECK(src->skipped_kernel() == 5);
}

TEST_CASE("matches are ORed within a kind and ANDed across kinds") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  const char* units[] = {"a.service", "b.service", "c.service"};
  const char* transports[] = {"journal", "stdout"};
  int n = 0;
  for (const char* u : units) {
    for (const char* tr : transports) {
      t.gen.Add({{"_TRANSPORT", tr},
                 {"_SYSTEMD_UNIT", u},
                 {"MESSAGE", std::string(u) + "/" + tr + "/" + std::to_string(n++)}});
    }
  }
  REQUIRE(t.Write());
  JournalSource::Options o = t.Options();
  o.units = {"a.service", "c.service"};
  o.transports = {"stdout"};
  auto src = t.Open(o);
  std::vector<LogRecord> got = ReadUntil(*src, 6, milliseconds(800));
  CHECK(Texts(got) == std::vector<std::string>{"a.service/stdout/1", "c.service/stdout/5"});
}

TEST_CASE("a restart resumes after the last committed entry with no loss or duplicate") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 30; ++i) t.gen.AddMessage("r" + std::to_string(i), "app");
  REQUIRE(t.Write());
  {
    auto src = t.Open(t.Options());
    std::vector<LogRecord> got = ReadUntil(*src, 30, milliseconds(5000));
    REQUIRE(got.size() == 30);
    // Only the first 12 were delivered before the stop.
    got.resize(12);
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  std::vector<std::string> all;
  {
    auto src = t.Open(t.Options());
    std::vector<LogRecord> got = ReadUntil(*src, 100, milliseconds(700));
    CHECK(Texts(got) == Numbered("app: r", 12, 30));
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  // Entries appended while the agent was down come next, once.
  for (int i = 30; i < 35; ++i) t.gen.AddMessage("r" + std::to_string(i), "app");
  REQUIRE(t.Write());
  auto src = t.Open(t.Options());
  CHECK(Texts(ReadUntil(*src, 100, milliseconds(700))) == Numbered("app: r", 30, 35));
}

TEST_CASE("a saved cursor whose entry was vacuumed resumes at the next newer entry") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 5; ++i) t.gen.AddMessage("old" + std::to_string(i), "app");
  REQUIRE(t.Write("a.journal"));
  for (int i = 0; i < 5; ++i) t.gen.AddMessage("new" + std::to_string(i), "app");
  REQUIRE(t.Write("b.journal"));
  {
    auto src = t.Open(t.Options());
    std::vector<LogRecord> got = ReadUntil(*src, 3, milliseconds(5000));
    REQUIRE(got.size() == 3);
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  std::filesystem::remove(t.dir + "/a.journal");  // vacuum
  auto src = t.Open(t.Options());
  // test_cursor() is 0 here: the first entry of b is read, not skipped.
  CHECK(Texts(ReadUntil(*src, 100, milliseconds(700))) == Numbered("app: new", 0, 5));
}

TEST_CASE("a malformed or corrupt checkpoint is counted and reading starts per policy") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 4; ++i) t.gen.AddMessage("x" + std::to_string(i), "app");
  REQUIRE(t.Write());
  {
    CheckpointStore store(t.tmp / "state", "journal");
    REQUIRE(store.Save(R"({"cursor":"this is not a cursor"})").ok());
  }
  {
    auto src = t.Open(t.Options());
    CHECK(Texts(ReadUntil(*src, 4, milliseconds(3000))) == Numbered("app: x", 0, 4));
    CHECK(src->stats().parse_errors == 1);
  }
  t.tmp.Write("state/journal.checkpoint", "garbage\n");
  auto src = t.Open(t.Options());
  CHECK(ReadUntil(*src, 4, milliseconds(3000)).size() == 4);
  CHECK(src->stats().parse_errors == 1);
}

TEST_CASE("by default only entries since the current boot are read") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  // Two entries from long before this boot, then two from a minute ago.
  t.gen.set_next_realtime_usec(1'000'000'000'000'000);  // 2001
  const std::uint64_t recent = JournalExportGenerator().next_realtime_usec();
  t.gen.AddMessage("ancient 0", "app");
  t.gen.AddMessage("ancient 1", "app");
  t.gen.set_next_realtime_usec(recent);
  t.gen.AddMessage("recent 0", "app");
  t.gen.AddMessage("recent 1", "app");
  REQUIRE(t.Write());
  JournalSource::Options o = t.Options();
  o.start = JournalSource::Start::kCurrentBoot;
  auto src = t.Open(o);
  CHECK(Texts(ReadUntil(*src, 4, milliseconds(700))) ==
        std::vector<std::string>{"app: recent 0", "app: recent 1"});
}

TEST_CASE("starting at the tail reads only entries written after opening") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 3; ++i) t.gen.AddMessage("before" + std::to_string(i), "app");
  REQUIRE(t.Write());
  JournalSource::Options o = t.Options();
  o.start = JournalSource::Start::kTail;
  auto src = t.Open(o);
  for (int i = 0; i < 3; ++i) t.gen.AddMessage("after" + std::to_string(i), "app");
  REQUIRE(t.Write());
  CHECK(Texts(ReadUntil(*src, 3, milliseconds(5000))) == Numbered("app: after", 0, 3));
}

TEST_CASE("entries appended while following are read within a bounded wait") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 5; ++i) t.gen.AddMessage("f" + std::to_string(i), "app");
  REQUIRE(t.Write());
  auto src = t.Open(t.Options());
  REQUIRE(ReadUntil(*src, 5, milliseconds(5000)).size() == 5);

  for (int i = 5; i < 10; ++i) t.gen.AddMessage("f" + std::to_string(i), "app");
  const std::string text = t.gen.Take();
  std::jthread writer([&] {
    std::this_thread::sleep_for(milliseconds(200));  // the reader is blocked in poll by then
    WriteJournal(t.dir + "/a.journal", text, t.tmp / "append");
  });
  const auto start = std::chrono::steady_clock::now();
  std::vector<LogRecord> got = ReadUntil(*src, 5, milliseconds(5000));
  MESSAGE(
      "append seen after "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count()
      << " ms");
  CHECK(Texts(got) == Numbered("app: f", 5, 10));
}

TEST_CASE("a new journal file in the directory (rotation) is picked up while following") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 3; ++i) t.gen.AddMessage("g" + std::to_string(i), "app");
  REQUIRE(t.Write("system.journal"));
  auto src = t.Open(t.Options());
  REQUIRE(ReadUntil(*src, 3, milliseconds(5000)).size() == 3);
  for (int i = 3; i < 8; ++i) t.gen.AddMessage("g" + std::to_string(i), "app");
  REQUIRE(t.Write("system@0001.journal"));
  CHECK(Texts(ReadUntil(*src, 5, milliseconds(5000))) == Numbered("app: g", 3, 8));
}

TEST_CASE("deleting an old journal file while following does not break reading") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 3; ++i) t.gen.AddMessage("d" + std::to_string(i), "app");
  REQUIRE(t.Write("old.journal"));
  for (int i = 3; i < 6; ++i) t.gen.AddMessage("d" + std::to_string(i), "app");
  REQUIRE(t.Write("cur.journal"));
  auto src = t.Open(t.Options());
  REQUIRE(Texts(ReadUntil(*src, 6, milliseconds(5000))) == Numbered("app: d", 0, 6));

  std::filesystem::remove(t.dir + "/old.journal");
  for (int i = 6; i < 9; ++i) t.gen.AddMessage("d" + std::to_string(i), "app");
  REQUIRE(t.Write("cur.journal"));
  CHECK(Texts(ReadUntil(*src, 3, milliseconds(5000))) == Numbered("app: d", 6, 9));
  CHECK(src->stats().lost == 0);
}

TEST_CASE("vacuuming the file the reader is positioned in loses nothing that still exists") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  for (int i = 0; i < 3; ++i) t.gen.AddMessage("v" + std::to_string(i), "app");
  REQUIRE(t.Write("a.journal"));
  for (int i = 3; i < 6; ++i) t.gen.AddMessage("v" + std::to_string(i), "app");
  REQUIRE(t.Write("b.journal"));
  auto src = t.Open(t.Options());
  REQUIRE(Texts(ReadUntil(*src, 3, milliseconds(5000))) == Numbered("app: v", 0, 3));
  std::filesystem::remove(t.dir + "/a.journal");
  for (int i = 6; i < 8; ++i) t.gen.AddMessage("v" + std::to_string(i), "app");
  REQUIRE(t.Write("b.journal"));
  CHECK(Texts(ReadUntil(*src, 5, milliseconds(5000))) == Numbered("app: v", 3, 8));
}

TEST_CASE("a read blocked with no data returns promptly after stop is requested") {
  REQUIRE_JOURNAL_REMOTE();
  JournalTest t;
  t.gen.AddMessage("only", "app");
  REQUIRE(t.Write());
  auto src = t.Open(t.Options());
  REQUIRE(ReadUntil(*src, 1, milliseconds(5000)).size() == 1);

  StoppedRead read = ReadThenStop(*src);
  CHECK(read.status.ok());
  CHECK(read.records.empty());
  CHECK(read.return_delay < milliseconds(200));
}

TEST_CASE("opening a directory that does not exist is an invalid argument") {
  JournalSource::Options o;
  o.directory = "/nonexistent/faultline/journal";
  auto s = JournalSource::Open(o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faultline
