// SPDX-License-Identifier: Apache-2.0
// KmsgSource on the real /dev/kmsg: lines written with unique markers are
// read back, a restart resumes with nothing lost or repeated, a blocked Read
// stops promptly. Other processes write to the ring too, so every check
// filters on this run's marker. Skipped (with a message) where /dev/kmsg is
// not writable. The ring-overrun test wipes the VM's kernel ring and runs only
// with FL_KMSG_FLOOD_TEST=1.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <doctest/doctest.h>

#include "collector/sources/kmsg_source.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

constexpr char kDevice[] = "/dev/kmsg";

KmsgSource::Options NewRecordsOnly() {
  KmsgSource::Options options;
  options.start_policy = KmsgSource::StartPolicy::kEnd;
  return options;
}

bool KmsgWritable() { return ::access(kDevice, R_OK | W_OK) == 0; }

// A marker unique to this process and test run.
std::string RunMarker() {
  std::random_device rd;
  return "fltest-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

// One line through a fresh fd: the kernel rate-limits writes per open file.
void WriteLine(const std::string& line) {
  int fd = ::open(kDevice, O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
  REQUIRE(n == static_cast<ssize_t>(line.size()));
}

// Reads until `done(records so far)` or `timeout`; a watchdog requests stop
// at the timeout, which Read() honours promptly.
std::vector<LogRecord> ReadUntil(Source& source,
                                 const std::function<bool(const std::vector<LogRecord>&)>& done,
                                 milliseconds timeout) {
  std::vector<LogRecord> got;
  StopAfter deadline(timeout);
  while (!done(got) && !deadline.expired()) {
    Status s = source.Read(got, 256, deadline.token());
    REQUIRE(s.ok());
  }
  return got;
}

// The records that carry `marker`, keyed by their text after it.
std::vector<std::string> Marked(const std::vector<LogRecord>& records, const std::string& marker) {
  std::vector<std::string> out;
  for (const LogRecord& r : records) {
    std::size_t at = r.text.find(marker);
    if (at != std::string::npos) out.push_back(r.text.substr(at + marker.size() + 1));
  }
  return out;
}

bool Has(const std::vector<LogRecord>& records, const std::string& text) {
  for (const LogRecord& r : records) {
    if (r.text.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("lines written to /dev/kmsg are read back with their priority and a user facility") {
  if (!KmsgWritable()) {
    MESSAGE("SKIPPED: /dev/kmsg is not readable and writable here");
    return;
  }
  const std::string marker = RunMarker();
  auto source = KmsgSource::Open(NewRecordsOnly());
  REQUIRE(source.ok());
  WriteLine("<4>NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus. " + marker + " a\n");
  WriteLine("<7>" + marker + " b\\with\ttab\n");
  std::vector<LogRecord> got = ReadUntil(
      **source, [&](const auto& r) { return Marked(r, marker).size() >= 2; }, milliseconds(5000));
  REQUIRE(Marked(got, marker) == std::vector<std::string>{"a", "b\\with\ttab"});
  for (const LogRecord& r : got) {
    if (r.text.find(marker + " a") == std::string::npos) continue;
    CHECK(r.text.rfind("NVRM: Xid (PCI:0000:03:00): 79", 0) == 0);
    CHECK(r.origin == Origin::kKernel);
    CHECK(r.labels.at("priority") == "4");
    CHECK(r.labels.at("facility") == "1");  // written by user space: LOG_USER
    CHECK(r.cursor.rfind((*source)->boot_id() + ":", 0) == 0);
    auto age = std::chrono::system_clock::now() - r.time;
    CHECK(age > -std::chrono::seconds(2));
    CHECK(age < std::chrono::seconds(10));
  }
}

TEST_CASE("a restart with a state directory loses and repeats no line of /dev/kmsg") {
  if (!KmsgWritable()) {
    MESSAGE("SKIPPED: /dev/kmsg is not readable and writable here");
    return;
  }
  TempDir dir;
  const std::string marker = RunMarker();
  KmsgSource::Options options;  // whole ring, then resume
  options.state_dir = dir / "state";
  for (int i = 1; i <= 4; ++i) WriteLine("<6>" + marker + " " + std::to_string(i) + "\n");
  {
    auto first = KmsgSource::Open(options);
    REQUIRE(first.ok());
    std::vector<LogRecord> got = ReadUntil(
        **first, [&](const auto& r) { return Has(r, marker + " 4"); }, milliseconds(5000));
    REQUIRE(Marked(got, marker) == std::vector<std::string>{"1", "2", "3", "4"});
    // The pipeline delivered everything up to line 2; 3 and 4 were in flight.
    for (const LogRecord& r : got) {
      (*first)->Commit(r.cursor);
      if (r.text.find(marker + " 2") != std::string::npos) break;
    }
    REQUIRE((*first)->SaveCheckpoint().ok());
  }
  // Written while the agent is down.
  for (int i = 5; i <= 6; ++i) WriteLine("<6>" + marker + " " + std::to_string(i) + "\n");
  auto second = KmsgSource::Open(options);
  REQUIRE(second.ok());
  WriteLine("<6>" + marker + " 7\n");
  std::vector<LogRecord> got = ReadUntil(
      **second, [&](const auto& r) { return Has(r, marker + " 7"); }, milliseconds(5000));
  CHECK(Marked(got, marker) == std::vector<std::string>{"3", "4", "5", "6", "7"});
  CHECK((*second)->stats().lost == 0);
}

TEST_CASE("a Read blocked on /dev/kmsg returns promptly when stop is requested") {
  if (!KmsgWritable()) {
    MESSAGE("SKIPPED: /dev/kmsg is not readable and writable here");
    return;
  }
  auto source = KmsgSource::Open(NewRecordsOnly());
  REQUIRE(source.ok());
  std::stop_source stop;
  std::chrono::steady_clock::time_point requested;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));  // let Read block first
    requested = std::chrono::steady_clock::now();
    stop.request_stop();
  });
  std::vector<LogRecord> out;
  // Other processes may log meanwhile: Read then returns early; read again.
  while (!stop.stop_requested()) REQUIRE((*source)->Read(out, 256, stop.get_token()).ok());
  auto returned = std::chrono::steady_clock::now();
  stopper.join();
  CHECK(returned - requested < milliseconds(200));
}

TEST_CASE("a ring-buffer overrun on /dev/kmsg is reported with the number of lost records") {
  const char* flood = ::getenv("FL_KMSG_FLOOD_TEST");  // NOLINT(concurrency-mt-unsafe)
  if (flood == nullptr || std::string(flood) != "1") {
    MESSAGE("SKIPPED: wipes the kernel ring; set FL_KMSG_FLOOD_TEST=1 to run it");
    return;
  }
  if (!KmsgWritable()) {
    MESSAGE("SKIPPED: /dev/kmsg is not readable and writable here");
    return;
  }
  const std::string marker = RunMarker();
  auto source = KmsgSource::Open(NewRecordsOnly());
  REQUIRE(source.ok());
  WriteLine("<6>" + marker + " start\n");
  std::vector<LogRecord> got = ReadUntil(
      **source, [&](const auto& r) { return Has(r, marker + " start"); }, milliseconds(5000));
  REQUIRE(Has(got, marker + " start"));
  // Far more than the ring holds, without reading: the reader falls behind.
  const std::string filler(900, 'x');
  for (int i = 0; i < 2000; ++i) {
    std::string line = "<7>";
    line.append(marker).append(" fill ").append(std::to_string(i)).append(" ").append(filler);
    WriteLine(line.append("\n"));
  }
  WriteLine("<6>" + marker + " end\n");
  std::vector<LogRecord> rest = ReadUntil(
      **source, [&](const auto& r) { return Has(r, marker + " end"); }, milliseconds(10000));
  REQUIRE(Has(rest, marker + " end"));
  got.insert(got.end(), rest.begin(), rest.end());
  CHECK((*source)->stats().lost > 0);
  CHECK(Has(got, "faultline: kmsg ring buffer overrun: "));
  // Exact accounting: every sequence number between the two markers was
  // either read or counted as lost (other processes' records included).
  std::uint64_t start_seq = 0, end_seq = 0, read_between = 0, lost_reported = 0;
  for (const LogRecord& r : got) {
    if (r.labels.count("lost")) {
      lost_reported += std::stoull(r.labels.at("lost"));
      continue;
    }
    std::uint64_t seq = std::stoull(r.labels.at("sequence"));
    if (r.text.find(marker + " start") != std::string::npos) start_seq = seq;
    if (r.text.find(marker + " end") != std::string::npos) end_seq = seq;
  }
  for (const LogRecord& r : got) {
    if (r.labels.count("lost")) continue;
    std::uint64_t seq = std::stoull(r.labels.at("sequence"));
    if (seq > start_seq && seq < end_seq) ++read_between;
  }
  CHECK(lost_reported == (*source)->stats().lost);
  CHECK(read_between + lost_reported == end_seq - start_seq - 1);
  MESSAGE("lost " << (*source)->stats().lost << " records");
}

}  // namespace
}  // namespace faultline
