// SPDX-License-Identifier: Apache-2.0
// FileSource: lines, cursors, resume, follow with appends, truncation and
// replacement, standard input, stop.
#include "collector/sources/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

#include <doctest/doctest.h>

#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

void Append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

std::string Cursor(const std::string& path, std::uint64_t offset) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(offset);
}

std::vector<std::string> Texts(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  out.reserve(records.size());
  for (const LogRecord& r : records) out.push_back(r.text);
  return out;
}

// Reads a finite source to kOutOfRange.
std::vector<LogRecord> ReadToEnd(Source& source, std::size_t batch = 100) {
  std::vector<LogRecord> got;
  for (int i = 0; i < 10000; ++i) {
    Status s = source.Read(got, batch, std::stop_token());
    if (s.code() == StatusCode::kOutOfRange) return got;
    REQUIRE(s.ok());
  }
  FAIL("no end of file");
  return got;
}

// Reads a following source until `want` records arrived or the timeout passed.
std::vector<LogRecord> ReadRecords(Source& source, std::size_t want,
                                   milliseconds timeout = milliseconds(3000)) {
  std::vector<LogRecord> got;
  StopAfter deadline(timeout);
  while (got.size() < want && !deadline.expired()) {
    REQUIRE(source.Read(got, want - got.size(), deadline.token()).ok());
  }
  return got;
}

FileSource::Options Opts(const std::string& path, bool follow = false) {
  FileSource::Options o;
  o.path = path;
  o.follow = follow;
  o.poll_interval = milliseconds(10);
  return o;
}

// Issue 11.10: the default was `any`, so any file an operator pointed the
// agent at could trigger kernel-only taint rules with text anyone can write.
TEST_CASE("a file source's lines are pod lines (the least trusted) unless configured") {
  TempDir dir;
  FileSource::Options o = Opts(dir.Write("x.log", "NVRM: Xid (PCI:0000:3b:00): 79\n"));
  CHECK(o.origin == Origin::kPod);
  auto source = FileSource::Open(o);
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadToEnd(**source);
  REQUIRE(got.size() == 1);
  CHECK(got[0].origin == Origin::kPod);
}

TEST_CASE("a file is read line by line with cursors, labels and end of file") {
  TempDir dir;
  std::string path = dir.Write("app.log", "first\nsecond\r\n\nlast without newline");
  FileSource::Options o = Opts(path);
  o.origin = Origin::kJournal;
  auto source = FileSource::Open(o);
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadToEnd(**source);
  CHECK(Texts(got) == std::vector<std::string>{"first", "second", "", "last without newline"});
  REQUIRE(got.size() == 4);
  CHECK(got[0].source == "file");
  CHECK(got[0].origin == Origin::kJournal);
  CHECK(got[0].cursor == Cursor(path, 6));
  CHECK(got[1].cursor == Cursor(path, 14));
  CHECK(got[3].cursor == Cursor(path, 35));
  CHECK(got[1].labels == Labels{{"file", path}, {"line", "2"}});
  CHECK((*source)->stats().records == 4);
  CHECK((*source)->stats().bytes == 31);
  // Still at the end.
  std::vector<LogRecord> more;
  CHECK((*source)->Read(more, 10, std::stop_token()).code() == StatusCode::kOutOfRange);
  CHECK(more.empty());
}

TEST_CASE("lines longer than the cap are cut and counted as parse errors") {
  TempDir dir;
  std::string path = dir.Write("long.log", std::string(100, 'a') + "\nshort\n");
  FileSource::Options o = Opts(path);
  o.max_line_bytes = 10;
  auto source = FileSource::Open(o);
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadToEnd(**source, 1);
  CHECK(Texts(got) == std::vector<std::string>{std::string(10, 'a'), "short"});
  CHECK(got[0].cursor == Cursor(path, 101));
  CHECK((*source)->stats().parse_errors == 1);
}

TEST_CASE("a restart resumes after the committed line of the same file") {
  TempDir dir;
  std::string path = dir.Write("app.log", "1\n2\n3\n4\n");
  FileSource::Options o = Opts(path);
  o.state_dir = dir / "state";
  {
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    std::vector<LogRecord> got = ReadToEnd(**source);
    REQUIRE(got.size() == 4);
    (*source)->Commit(got[0].cursor);
    (*source)->Commit(got[1].cursor);
    REQUIRE((*source)->SaveCheckpoint().ok());
  }
  SUBCASE("same file") {
    Append(path, "5\n");
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    std::vector<LogRecord> got = ReadToEnd(**source);
    CHECK(Texts(got) == std::vector<std::string>{"3", "4", "5"});
    CHECK(got[0].labels.at("line") == "3");
  }
  SUBCASE("replaced by another file") {
    std::filesystem::remove(path);
    dir.Write("app.log", "new 1\n");
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    CHECK(Texts(ReadToEnd(**source)) == std::vector<std::string>{"new 1"});
  }
  SUBCASE("truncated") {
    std::filesystem::resize_file(path, 2);
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    CHECK(Texts(ReadToEnd(**source)) == std::vector<std::string>{"1"});
  }
  SUBCASE("corrupt checkpoint: read from the start") {
    dir.Write("state/file.checkpoint", "garbage");
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    CHECK(ReadToEnd(**source).size() == 4);
    CHECK((*source)->stats().parse_errors == 1);
  }
}

TEST_CASE("following a file picks up appends, waiting for the end of a line") {
  TempDir dir;
  std::string path = dir.Write("app.log", "one\n");
  auto source = FileSource::Open(Opts(path, /*follow=*/true));
  REQUIRE(source.ok());
  CHECK(Texts(ReadRecords(**source, 1)) == std::vector<std::string>{"one"});
  Append(path, "tw");
  CHECK(ReadRecords(**source, 1, milliseconds(100)).empty());  // half a line is not a line
  Append(path, "o\nthree\n");
  CHECK(Texts(ReadRecords(**source, 2)) == std::vector<std::string>{"two", "three"});
}

TEST_CASE("following a truncated file restarts at its beginning") {
  TempDir dir;
  std::string path = dir.Write("app.log", "one\ntwo\n");
  auto source = FileSource::Open(Opts(path, /*follow=*/true));
  REQUIRE(source.ok());
  CHECK(ReadRecords(**source, 2).size() == 2);
  std::filesystem::resize_file(path, 0);
  Append(path, "3\n");
  std::vector<LogRecord> got = ReadRecords(**source, 1);
  CHECK(Texts(got) == std::vector<std::string>{"3"});
  CHECK(got.at(0).cursor == Cursor(path, 2));
  CHECK(got.at(0).labels.at("line") == "1");
}

// The lines in flight are kept as runs of end offsets (8 bytes a line, not a
// cursor string and position each): a commit must still find its line, with
// the right line number, when the same file restarted (a truncation makes
// offsets restart in the same dev:ino), and ignore cursors that are not ours.
TEST_CASE("a commit after a truncation checkpoints the right line of the new contents") {
  TempDir dir;
  std::string path = dir.Write("app.log", "one\ntwo\n");
  FileSource::Options o = Opts(path, /*follow=*/true);
  o.state_dir = dir / "state";
  {
    auto source = FileSource::Open(o);
    REQUIRE(source.ok());
    std::vector<LogRecord> got = ReadRecords(**source, 2);
    REQUIRE(got.size() == 2);
    std::filesystem::resize_file(path, 0);
    Append(path, "3\n4\n");  // shorter than before: seen as a truncation
    std::vector<LogRecord> more = ReadRecords(**source, 2);
    REQUIRE(Texts(more) == std::vector<std::string>{"3", "4"});
    (*source)->Commit("not a cursor");
    (*source)->Commit(Cursor(path, 3));        // no line ends there
    (*source)->Commit("0" + Cursor(path, 4));  // formats differently: not ours
    REQUIRE((*source)->SaveCheckpoint().ok());
    CHECK_FALSE(std::filesystem::exists(dir / "state/file.checkpoint"));
    (*source)->Commit(more[0].cursor);  // "3": offset 2, which only the new run has
    REQUIRE((*source)->SaveCheckpoint().ok());
  }
  Append(path, "5\n");
  auto source = FileSource::Open(o);
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadRecords(**source, 2);
  CHECK(Texts(got) == std::vector<std::string>{"4", "5"});
  REQUIRE(got.size() == 2);
  CHECK(got[0].labels.at("line") == "2");
}

TEST_CASE("following a replaced file reads the old one to its end first") {
  TempDir dir;
  std::string path = dir.Write("app.log", "old 1\n");
  auto source = FileSource::Open(Opts(path, /*follow=*/true));
  REQUIRE(source.ok());
  CHECK(Texts(ReadRecords(**source, 1)) == std::vector<std::string>{"old 1"});
  // Rotation: rename, the writer still appends to the renamed file, then a
  // new file appears under the name.
  std::string rotated = dir / "app.log.1";
  std::filesystem::rename(path, rotated);
  Append(rotated, "old 2\nold 3 unterminated");
  dir.Write("app.log", "new 1\n");
  std::vector<LogRecord> got = ReadRecords(**source, 3);
  CHECK(Texts(got) == std::vector<std::string>{"old 2", "old 3 unterminated", "new 1"});
  REQUIRE(got.size() == 3);
  CHECK(got[1].cursor == Cursor(rotated, 30));
  CHECK(got[2].cursor == Cursor(path, 6));
}

TEST_CASE("following a file that does not exist yet waits for it to appear") {
  TempDir dir;
  std::string path = dir / "later.log";
  auto source = FileSource::Open(Opts(path, /*follow=*/true));
  REQUIRE(source.ok());
  CHECK(ReadRecords(**source, 1, milliseconds(50)).empty());
  dir.Write("later.log", "here\n");
  CHECK(Texts(ReadRecords(**source, 1)) == std::vector<std::string>{"here"});
}

TEST_CASE("a following Read with no new data returns promptly on stop") {
  TempDir dir;
  FileSource::Options o = Opts(dir.Write("idle.log", ""), /*follow=*/true);
  o.poll_interval = std::chrono::seconds(10);
  auto source = FileSource::Open(o);
  REQUIRE(source.ok());
  StoppedRead read = ReadThenStop(**source, milliseconds(50));
  CHECK(read.status.ok());
  CHECK(read.records.empty());
  CHECK(read.return_delay < milliseconds(200));
}

// Puts a pipe on fd 0 for the duration of a test.
struct PipeOnStdin {
  int saved = ::dup(STDIN_FILENO);
  int write_end = -1;
  PipeOnStdin() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::dup2(fds[0], STDIN_FILENO) == STDIN_FILENO);
    ::close(fds[0]);
    write_end = fds[1];
  }
  void Write(const std::string& s) {
    REQUIRE(::write(write_end, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
  }
  void Close() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
  ~PipeOnStdin() {
    Close();
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
  }
};

TEST_CASE("standard input is read to its end with path \"-\"") {
  PipeOnStdin in;
  in.Write("a\nb\nc");
  in.Close();
  auto source = FileSource::Open(Opts("-"));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadToEnd(**source);
  CHECK(Texts(got) == std::vector<std::string>{"a", "b", "c"});
  CHECK(got[0].labels.at("file") == "-");
  CHECK((*source)->SaveCheckpoint().ok());
}

TEST_CASE("a Read on an idle standard input returns promptly on stop") {
  PipeOnStdin in;
  auto source = FileSource::Open(Opts("-", /*follow=*/true));
  REQUIRE(source.ok());
  StoppedRead read = ReadThenStop(**source, milliseconds(50));
  CHECK(read.status.ok());
  CHECK(read.return_delay < milliseconds(200));
}

TEST_CASE("a missing file or bad options are refused with the matching code") {
  TempDir dir;
  CHECK(FileSource::Open(Opts(dir / "missing")).error().code() == StatusCode::kNotFound);
  CHECK(FileSource::Open(Opts("")).error().code() == StatusCode::kInvalidArgument);
  FileSource::Options o = Opts(dir.Write("a", ""));
  o.max_line_bytes = 0;
  CHECK(FileSource::Open(o).error().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faultline
