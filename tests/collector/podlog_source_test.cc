// SPDX-License-Identifier: Apache-2.0
// Pod log source against generated /var/log/pods-style trees.
#include "collector/sources/podlog_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/time_format.h"
#include "collector/sources/podlog_source_testing.h"
#include "tests/support/cri_tree.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

struct PodTest {
  TempDir tmp;
  fs::path root = tmp.path() / "pods";

  PodTest() { fs::create_directories(root); }

  PodLogSource::Options Options() const {
    PodLogSource::Options o;
    o.root = root.string();
    o.state_dir = tmp / "state";
    o.rescan_interval = milliseconds(50);
    o.read_interval = milliseconds(20);
    return o;
  }
  std::unique_ptr<PodLogSource> Open(const PodLogSource::Options& o) const {
    auto s = PodLogSource::Open(o);
    REQUIRE_MESSAGE(s.ok(), s.error().message());
    return std::move(*s);
  }
  std::unique_ptr<PodLogSource> Open() const { return Open(Options()); }
  fs::path Dir(std::string_view ns = "gpu-ops", std::string_view pod = "trainer-0",
               std::string_view container = "main") const {
    return PodLogDir(root, ns, pod, std::string("uid-") + std::string(pod), container);
  }
};

std::vector<std::string> Texts(const std::vector<LogRecord>& records) {
  std::vector<std::string> t;
  t.reserve(records.size());
  for (const LogRecord& r : records) t.push_back(r.text);
  return t;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Reads until nothing more arrives for a short while: for "exactly these,
// and nothing else" checks.
std::vector<LogRecord> ReadAll(Source& s, std::size_t at_least) {
  std::vector<LogRecord> got = ReadUntil(s, at_least, milliseconds(5000));
  std::vector<LogRecord> more = ReadUntil(s, 1000, milliseconds(300));
  got.insert(got.end(), more.begin(), more.end());
  return got;
}

TEST_CASE("pod directory names and log file names are classified") {
  auto d = ParsePodDirName("gpu-ops_trainer-0_0b9c2e4a-1111-4a4a-9d9d-123456789abc");
  REQUIRE(d);
  CHECK(d->namespace_name == "gpu-ops");
  CHECK(d->pod == "trainer-0");
  CHECK(d->uid == "0b9c2e4a-1111-4a4a-9d9d-123456789abc");
  CHECK_FALSE(ParsePodDirName("a_b"));
  CHECK_FALSE(ParsePodDirName("a_b_c_d"));
  CHECK_FALSE(ParsePodDirName("a__c"));
  CHECK(ClassifyPodLogFile("0.log") == PodLogFileKind::kCurrent);
  CHECK(ClassifyPodLogFile("12.log") == PodLogFileKind::kCurrent);
  CHECK(ClassifyPodLogFile("0.log.20261122-070253") == PodLogFileKind::kRotated);
  CHECK(ClassifyPodLogFile("0.log.20261122-070253.gz") == PodLogFileKind::kCompressed);
  CHECK(ClassifyPodLogFile("0.log.20261122-070253.gz.tmp") == PodLogFileKind::kIgnored);
  CHECK(ClassifyPodLogFile("0.log.tmp") == PodLogFileKind::kIgnored);
  CHECK(ClassifyPodLogFile("x.log") == PodLogFileKind::kIgnored);
  CHECK(ClassifyPodLogFile(".log") == PodLogFileKind::kIgnored);
}

TEST_CASE("lines in both runtimes' formats are read whole with pod labels and CRI time") {
  PodTest t;
  CriContainerLog c(t.Dir());
  const auto when = *ParseRfc3339("2026-11-22T07:02:53.17905Z");
  c.WriteRaw(CriLines("stdout", "starting training job", CriStyle::kContainerd, 16384, when));
  c.Write("stderr", "CUDA error: an illegal memory access was encountered");
  c.Write("stdout", std::string(40, 'x'), CriStyle::kCrio, 16);  // P, P, F
  auto src = t.Open();
  std::vector<LogRecord> got = ReadAll(*src, 3);
  REQUIRE(Texts(got) == std::vector<std::string>{"starting training job",
                                                 "CUDA error: an illegal memory access was "
                                                 "encountered",
                                                 std::string(40, 'x')});
  CHECK(got[0].time == when);
  CHECK(got[0].origin == Origin::kPod);
  CHECK(got[0].source == "podlog");
  CHECK(got[0].labels.at("namespace") == "gpu-ops");
  CHECK(got[0].labels.at("pod") == "trainer-0");
  CHECK(got[0].labels.at("uid") == "uid-trainer-0");
  CHECK(got[0].labels.at("container") == "main");
  CHECK(got[0].labels.at("stream") == "stdout");
  CHECK(got[1].labels.at("stream") == "stderr");
  CHECK(src->stats().records == 3);
  CHECK(src->stats().parse_errors == 0);
}

TEST_CASE("a non-CRI line is counted as a parse error and the lines around it are read") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.Write("stdout", "before");
  c.WriteRaw("this is not CRI\n");
  c.Write("stdout", "after");
  auto src = t.Open();
  CHECK(Texts(ReadAll(*src, 2)) == std::vector<std::string>{"before", "after"});
  CHECK(src->stats().parse_errors == 1);
}

TEST_CASE("a joined line beyond the cap is cut, labelled and counted") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.Write("stdout", std::string(300, 'y'), CriStyle::kContainerd, 16);
  c.Write("stdout", "short");
  PodLogSource::Options o = t.Options();
  o.max_line_bytes = 100;
  auto src = t.Open(o);
  std::vector<LogRecord> got = ReadAll(*src, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].text == std::string(100, 'y'));
  CHECK(got[0].labels.at("truncated") == "true");
  CHECK(got[1].text == "short");
  CHECK(src->truncated_lines() == 1);
}

TEST_CASE("three kubelet rotations with writes after the rename lose and repeat nothing") {
  PodTest t;
  CriContainerLog c(t.Dir());
  auto src = t.Open();
  std::vector<std::string> want;
  std::vector<LogRecord> got;
  int n = 0;
  for (int r = 0; r < 3; ++r) {
    for (int i = 0; i < 5; ++i) {
      want.push_back("line " + std::to_string(n));
      c.Write(i % 2 ? "stderr" : "stdout", want.back(),
              r % 2 ? CriStyle::kCrio : CriStyle::kContainerd);
      ++n;
    }
    // A long line split across P chunks, then rotation with a race write.
    want.push_back(std::string(50, static_cast<char>('a' + r)));
    c.Write("stdout", want.back(), CriStyle::kContainerd, 8);
    std::vector<LogRecord> part = ReadUntil(*src, 6, milliseconds(5000));
    got.insert(got.end(), part.begin(), part.end());
    want.push_back("written to old fd after rename " + std::to_string(r));
    c.Rotate("20261122-07000" + std::to_string(r),
             CriLines("stdout", want.back(), CriStyle::kContainerd));
  }
  want.push_back("after the last rotation");
  c.Write("stdout", want.back());
  std::vector<LogRecord> rest = ReadAll(*src, 4);
  got.insert(got.end(), rest.begin(), rest.end());
  CHECK(Sorted(Texts(got)) == Sorted(want));
  CHECK(got.size() == want.size());
  CHECK(fs::exists(c.log().string() + ".20261122-070000.gz"));
  CHECK(src->stats().lost == 0);
}

TEST_CASE("the renamed file is drained to its end, even when written after the new file") {
  PodTest t;
  const fs::path dir = t.Dir();
  fs::create_directories(dir);
  const std::string log = (dir / "0.log").string();
  int old_fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  REQUIRE(old_fd >= 0);
  auto write = [](int fd, const std::string& s) {
    REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
  };
  write(old_fd, CriLines("stdout", "old 1", CriStyle::kContainerd));
  auto src = t.Open();
  REQUIRE(Texts(ReadUntil(*src, 1, milliseconds(5000))) == std::vector<std::string>{"old 1"});

  fs::rename(log, log + ".20261122-070253");
  int new_fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  REQUIRE(new_fd >= 0);
  write(new_fd, CriLines("stdout", "new 1", CriStyle::kContainerd));
  CHECK(Texts(ReadUntil(*src, 1, milliseconds(5000))) == std::vector<std::string>{"new 1"});
  // The runtime had not reopened yet for this one.
  write(old_fd, CriLines("stdout", "late on old", CriStyle::kContainerd));
  CHECK(Texts(ReadUntil(*src, 1, milliseconds(5000))) == std::vector<std::string>{"late on old"});
  ::close(old_fd);
  ::close(new_fd);

  // kubelet prunes the rotated file: it is forgotten.
  CHECK(PodLogSourceTesting::TrackedFiles(*src) == 2);
  fs::remove(log + ".20261122-070253");
  CHECK(ReadUntil(*src, 1, milliseconds(300)).empty());
  CHECK(PodLogSourceTesting::TrackedFiles(*src) == 1);
}

TEST_CASE("a restart resumes every file from its committed offset with no loss or duplicate") {
  PodTest t;
  std::vector<std::string> want_after;
  {
    CriContainerLog c(t.Dir());
    CriContainerLog other(t.Dir("gpu-ops", "trainer-1", "sidecar"));
    for (int i = 0; i < 10; ++i) c.Write("stdout", "a" + std::to_string(i));
    for (int i = 0; i < 4; ++i) other.Write("stderr", "b" + std::to_string(i));
    {
      auto src = t.Open();
      std::vector<LogRecord> got = ReadAll(*src, 14);
      REQUIRE(got.size() == 14);
      // Deliver a0..a5 and b0..b1 only, in read order per file.
      for (const LogRecord& r : got) {
        const std::string& x = r.text;
        if ((x[0] == 'a' && x[1] < '6') || (x[0] == 'b' && x[1] < '2')) src->Commit(r.cursor);
      }
      REQUIRE(src->SaveCheckpoint().ok());
    }
    for (int i = 6; i < 10; ++i) want_after.push_back("a" + std::to_string(i));
    for (int i = 2; i < 4; ++i) want_after.push_back("b" + std::to_string(i));
    // While the agent is down: more lines, a rotation with a race write, and more.
    for (int i = 10; i < 13; ++i) {
      c.Write("stdout", "a" + std::to_string(i));
      want_after.push_back("a" + std::to_string(i));
    }
    c.Rotate("20261122-080000", CriLines("stdout", "a-race", CriStyle::kCrio));
    want_after.push_back("a-race");
    c.Write("stdout", "a-new");
    want_after.push_back("a-new");
  }
  auto src = t.Open();
  std::vector<LogRecord> got = ReadAll(*src, want_after.size());
  CHECK(Sorted(Texts(got)) == Sorted(want_after));
  CHECK(got.size() == want_after.size());
}

// Issue 11.8: kubelet compresses a rotated file at the next rotation. If
// that happens while the agent is down, the rest of the file is only in the
// .gz, which was never read.
TEST_CASE("a rotated file compressed while the agent was down is read on from its offset") {
  PodTest t;
  CriContainerLog c(t.Dir());
  for (int i = 0; i < 5; ++i) c.Write("stdout", "a" + std::to_string(i));
  {
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 5);
    REQUIRE(got.size() == 5);
    src->Commit(got[0].cursor);
    src->Commit(got[1].cursor);  // a2..a4 read, not delivered
    REQUIRE(src->SaveCheckpoint().ok());
  }
  c.Rotate("20261122-080000");
  c.Write("stdout", "b0");
  c.Rotate("20261122-080100");  // gzips 0.log.20261122-080000, removes it
  c.Write("stdout", "c0");
  REQUIRE(fs::exists(c.log().string() + ".20261122-080000.gz"));
  REQUIRE(!fs::exists(c.log().string() + ".20261122-080000"));
  {
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 5);
    CHECK(Sorted(Texts(got)) == std::vector<std::string>{"a2", "a3", "a4", "b0", "c0"});
    CHECK(src->stats().lost == 0);
    // Commit only a2 from the .gz: a restart resumes inside it.
    for (const LogRecord& r : got) {
      if (r.text != "a3" && r.text != "a4") src->Commit(r.cursor);
    }
    REQUIRE(src->SaveCheckpoint().ok());
  }
  auto src = t.Open();
  CHECK(Sorted(Texts(ReadAll(*src, 2))) == std::vector<std::string>{"a3", "a4"});
}

TEST_CASE("a checkpointed file gone at start with unread data is counted as lost") {
  PodTest t;
  const fs::path dir = t.Dir();
  {
    CriContainerLog c(dir);
    for (int i = 0; i < 5; ++i) c.Write("stdout", "a" + std::to_string(i));
    CriContainerLog done(t.Dir("gpu-ops", "done-pod"));
    done.Write("stdout", "all read");
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 6);
    REQUIRE(got.size() == 6);
    for (const LogRecord& r : got) {
      if (r.text == "a0" || r.text == "all read") src->Commit(r.cursor);
    }
    REQUIRE(src->SaveCheckpoint().ok());
  }
  // Both pods deleted while the agent was down: a1..a4 were never delivered.
  fs::remove_all(dir.parent_path());
  fs::remove_all(t.Dir("gpu-ops", "done-pod").parent_path());
  auto src = t.Open();
  CHECK(ReadAll(*src, 1).empty());
  CHECK(src->stats().lost == 1);  // one file; the fully read one is no loss
}

TEST_CASE("a checkpointed inode that now holds another file is read from the start") {
  PodTest t;
  const fs::path log = t.Dir() / "0.log";
  t.tmp.Write(fs::relative(log, t.tmp.path()).string(),
              CriLines("stdout", "first file line 1", CriStyle::kContainerd) +
                  CriLines("stdout", "first file line 2", CriStyle::kContainerd));
  {
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 2);
    REQUIRE(got.size() == 2);
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  // Same inode (rewritten in place), longer, different content: as if the
  // inode had been recycled for a new container's log.
  {
    std::ofstream out(log, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 4; ++i) {
      out << CriLines("stderr", "second file line " + std::to_string(i), CriStyle::kCrio);
    }
  }
  auto src = t.Open();
  CHECK(Texts(ReadAll(*src, 4)) ==
        std::vector<std::string>{"second file line 0", "second file line 1", "second file line 2",
                                 "second file line 3"});
}

TEST_CASE("without any checkpoint, rotated history is skipped and current files read whole") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.Write("stdout", "history");
  c.Rotate("20261122-060000");
  c.Write("stdout", "current");
  auto src = t.Open();
  CHECK(Texts(ReadAll(*src, 1)) == std::vector<std::string>{"current"});
}

TEST_CASE("a partial line pending on one stream is not lost by committing the other stream") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.Write("stdout", "first half ");
  // Write a P chunk by hand: stdout P, then a full stderr line.
  c.WriteRaw("2026-11-22T07:02:53Z stdout P out-part-1 \n");
  c.WriteRaw("2026-11-22T07:02:54Z stderr F err-full\n");
  {
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 2);
    REQUIRE(Texts(got) == std::vector<std::string>{"first half ", "err-full"});
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  c.WriteRaw("2026-11-22T07:02:55Z stdout F out-part-2\n");
  auto src = t.Open();
  std::vector<LogRecord> got = ReadAll(*src, 1);
  // The stdout line is whole. err-full's cursor had to stay before the
  // pending P chunk, so it is read once more: a duplicate, never a loss.
  CHECK(Texts(got) == std::vector<std::string>{"err-full", "out-part-1 out-part-2"});
}

// Issue 11.5: a progress bar on stdout (P chunks, no F yet) and three IB
// errors on stderr. Their event ids derive from the cursor, so equal cursors
// made the tainter drop two of the three as duplicates.
TEST_CASE("records read while another stream's partial line is pending get distinct cursors") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.WriteRaw("2026-11-22T07:02:53Z stdout P epoch 1: 10% \n");
  c.WriteRaw("2026-11-22T07:02:53Z stdout P 20% \n");
  for (int i = 0; i < 3; ++i) {
    c.WriteRaw("2026-11-22T07:02:54Z stderr F mlx5: completion error " + std::to_string(i) + "\n");
  }
  std::vector<std::string> first;
  {
    auto src = t.Open();
    std::vector<LogRecord> got = ReadAll(*src, 3);
    REQUIRE(got.size() == 3);
    for (const LogRecord& r : got) first.push_back(r.cursor);
    CHECK(std::set<std::string>(first.begin(), first.end()).size() == 3);
    // Committing all three keeps the pending chunk: the checkpoint stays before it.
    CommitAll(*src, got);
    REQUIRE(src->SaveCheckpoint().ok());
  }
  // After a restart the same records are read again (the P chunk lies before
  // them) with the same cursors: a re-sent event keeps its id.
  auto src = t.Open();
  std::vector<LogRecord> again = ReadAll(*src, 3);
  REQUIRE(again.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) CHECK(again[i].cursor == first[i]);
  c.WriteRaw("2026-11-22T07:02:55Z stdout F 100%\n");
  std::vector<LogRecord> last = ReadAll(*src, 1);
  REQUIRE(Texts(last) == std::vector<std::string>{"epoch 1: 10% 20% 100%"});
  CHECK(std::find(first.begin(), first.end(), last[0].cursor) == first.end());
}

// Issue 11.4: one line longer than the cap is cut at the cap without being
// buffered whole, labelled and counted; the lines after it are read.
TEST_CASE("a single CRI line longer than the cap is cut, labelled, and the next line read") {
  PodTest t;
  CriContainerLog c(t.Dir());
  c.WriteRaw("2026-11-22T07:02:53Z stderr F NCCL WARN " +
             std::string(std::size_t{1024} * 1024, 'y') + "\n");
  c.Write("stdout", "after");
  PodLogSource::Options o = t.Options();
  o.max_line_bytes = 4096;
  auto src = t.Open(o);
  std::vector<LogRecord> got = ReadAll(*src, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].text == "NCCL WARN " + std::string(4096 - 10, 'y'));
  CHECK(got[0].labels.at("truncated") == "true");
  CHECK(got[0].labels.at("stream") == "stderr");
  CHECK(src->truncated_lines() == 1);
  CHECK(got[1].text == "after");
  CHECK(src->stats().parse_errors == 0);
}

TEST_CASE("a Read stops at the batch byte bound, and the rest comes in the next") {
  PodTest t;
  CriContainerLog c(t.Dir());
  for (int i = 0; i < 10; ++i) c.Write("stdout", std::to_string(i) + std::string(9999, 'z'));
  auto src = t.Open();
  src->set_max_batch_bytes(25000);
  std::vector<LogRecord> got;
  std::stop_source stop;
  while (got.empty()) REQUIRE(src->Read(got, 256, stop.get_token()).ok());
  CHECK(got.size() == 3);  // stops once 25,000 bytes are reached: 3 x 10,000
  std::vector<LogRecord> rest = ReadAll(*src, 7);
  CHECK(rest.size() == 7);
}

TEST_CASE("a busy container does not starve the others") {
  PodTest t;
  CriContainerLog busy(t.Dir("a-busy", "p"));
  CriContainerLog quiet(t.Dir("b-quiet", "p"));
  for (int i = 0; i < 200; ++i) busy.Write("stdout", "busy " + std::to_string(i));
  quiet.Write("stdout", "quiet");
  auto src = t.Open();
  std::vector<LogRecord> got;
  std::stop_source stop;
  for (int i = 0; i < 3; ++i) REQUIRE(src->Read(got, 10, stop.get_token()).ok());
  const std::vector<std::string> texts = Texts(got);
  CHECK(std::find(texts.begin(), texts.end(), "quiet") != texts.end());
}

TEST_CASE("a new pod appearing while reading is picked up without restart") {
  PodTest t;
  auto src = t.Open();
  std::jthread creator([&t] {
    std::this_thread::sleep_for(milliseconds(150));
    CriContainerLog c(t.Dir("gpu-ops", "late-pod", "worker"));
    c.Write("stdout", "hello from a new pod");
  });
  std::vector<LogRecord> got = ReadUntil(*src, 1, milliseconds(5000));
  REQUIRE(got.size() == 1);
  CHECK(got[0].text == "hello from a new pod");
  CHECK(got[0].labels.at("pod") == "late-pod");
  CHECK(got[0].labels.at("container") == "worker");
}

TEST_CASE("a deleted pod is forgotten, its last partial line emitted") {
  PodTest t;
  {
    CriContainerLog c(t.Dir("gpu-ops", "gone"));
    c.Write("stdout", "whole");
    c.WriteRaw("2026-11-22T07:02:53Z stdout P exited without newline\n");
  }
  auto src = t.Open();
  REQUIRE(Texts(ReadUntil(*src, 1, milliseconds(5000))) == std::vector<std::string>{"whole"});
  CHECK(PodLogSourceTesting::TrackedFiles(*src) == 1);
  fs::remove_all(t.Dir("gpu-ops", "gone").parent_path());
  CHECK(Texts(ReadUntil(*src, 1, milliseconds(5000))) ==
        std::vector<std::string>{"exited without newline"});
  CHECK(ReadUntil(*src, 1, milliseconds(200)).empty());
  CHECK(PodLogSourceTesting::TrackedFiles(*src) == 0);
}

TEST_CASE("namespace include and exclude lists select pods") {
  PodTest t;
  CriContainerLog a(t.Dir("gpu-ops", "p1"));
  CriContainerLog b(t.Dir("kube-system", "p2"));
  CriContainerLog d(t.Dir("default", "p3"));
  a.Write("stdout", "from gpu-ops");
  b.Write("stdout", "from kube-system");
  d.Write("stdout", "from default");
  PodLogSource::Options o = t.Options();
  o.include_namespaces = {"gpu-ops", "default"};
  o.exclude_namespaces = {"default"};
  auto src = t.Open(o);
  CHECK(Texts(ReadAll(*src, 1)) == std::vector<std::string>{"from gpu-ops"});

  PodLogSource::Options only_exclude = t.Options();
  only_exclude.state_dir.clear();
  only_exclude.exclude_namespaces = {"kube-system"};
  auto src2 = t.Open(only_exclude);
  CHECK(Sorted(Texts(ReadAll(*src2, 2))) ==
        std::vector<std::string>{"from default", "from gpu-ops"});
}

TEST_CASE("a read blocked with no data returns promptly after stop is requested") {
  PodTest t;
  PodLogSource::Options o = t.Options();
  o.read_interval = milliseconds(5000);
  o.rescan_interval = milliseconds(5000);
  auto src = t.Open(o);
  StoppedRead read = ReadThenStop(*src);
  CHECK(read.status.ok());
  CHECK(read.records.empty());
  CHECK(read.return_delay < milliseconds(200));
}

TEST_CASE("bad options are refused") {
  PodLogSource::Options o;
  o.read_interval = milliseconds(0);
  CHECK(PodLogSource::Open(o).error().code() == StatusCode::kInvalidArgument);
  o = PodLogSource::Options();
  o.max_line_bytes = 0;
  CHECK(PodLogSource::Open(o).error().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faultline
