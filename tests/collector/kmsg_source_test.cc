// SPDX-License-Identifier: Apache-2.0
// KmsgSource on a scripted ring (FakeKmsgDevice): conversion to LogRecord,
// sequence gaps and EPIPE overruns, checkpoints and resume, stop.
#include "collector/sources/kmsg_source.h"

#include <thread>

#include <doctest/doctest.h>

#include "base/log.h"
#include "base/log_testing.h"
#include "tests/collector/fake_kmsg_device.h"
#include "tests/fakes/fake_clock.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;
using Ring = FakeKmsgDevice::Ring;

constexpr char kBootA[] = "11111111-2222-3333-4444-555555555555";
constexpr char kBootB[] = "99999999-8888-7777-6666-555555555555";

struct Fixture {
  TempDir dir;
  FakeClock clock;
  std::shared_ptr<Ring> ring = std::make_shared<Ring>();

  Fixture() { SetBoot(kBootA); }
  void SetBoot(const char* id) { dir.Write("boot_id", std::string(id) + "\n"); }

  KmsgSource::Options Options(bool with_state = true) {
    KmsgSource::Options o;
    o.device_path = "fake";
    o.boot_id_path = dir / "boot_id";
    if (with_state) o.state_dir = dir / "state";
    return o;
  }

  std::unique_ptr<KmsgSource> Open(const KmsgSource::Options& o) {
    Result<std::unique_ptr<KmsgSource>> s =
        KmsgSource::OpenWithDevice(o, std::make_unique<FakeKmsgDevice>(ring), clock);
    REQUIRE(s.ok());
    return std::move(*s);
  }
  std::unique_ptr<KmsgSource> Open() { return Open(Options()); }
};

// Reads until the fake ring is drained (Ring::idle_is_stop makes a Read on
// the drained ring return with nothing).
std::vector<LogRecord> ReadAll(KmsgSource& source, std::size_t max_per_call = 100) {
  std::vector<LogRecord> all;
  for (int i = 0; i < 1000; ++i) {
    std::vector<LogRecord> batch;
    REQUIRE(source.Read(batch, max_per_call, std::stop_token()).ok());
    if (batch.empty()) break;
    all.insert(all.end(), batch.begin(), batch.end());
  }
  return all;
}

std::vector<std::string> Texts(const std::vector<LogRecord>& records) {
  std::vector<std::string> texts;
  texts.reserve(records.size());
  for (const LogRecord& r : records) texts.push_back(r.text);
  return texts;
}

TEST_CASE("kmsg records become kernel LogRecords with labels, cursor and wall-clock time") {
  Fixture f;
  f.ring->Add(
      "4,7,2000000,-;NVRM: Xid (PCI:0000:03:00): 79\n SUBSYSTEM=pci\n DEVICE=+pci:0000:03:00.0\n");
  auto source = f.Open();
  // FakeClock: monotonic "since boot" is 1 h; the record was logged 2 s after boot.
  std::vector<LogRecord> got = ReadAll(*source);
  REQUIRE(got.size() == 1);
  const LogRecord& r = got[0];
  CHECK(r.source == "kmsg");
  CHECK(r.origin == Origin::kKernel);
  CHECK(r.text == "NVRM: Xid (PCI:0000:03:00): 79");
  CHECK(r.cursor == std::string(kBootA) + ":7");
  CHECK(r.labels == Labels{{"priority", "4"},
                           {"facility", "0"},
                           {"sequence", "7"},
                           {"subsystem", "pci"},
                           {"device", "+pci:0000:03:00.0"}});
  CHECK(f.clock.Now() - r.time == std::chrono::hours(1) - std::chrono::seconds(2));
  SourceStats st = source->stats();
  CHECK(st.records == 1);
  CHECK(st.bytes == r.text.size());
  CHECK(st.lost == 0);
}

TEST_CASE("Read returns at most max_records and keeps the rest for the next call") {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.ring->AddText(i, "line " + std::to_string(i));
  auto source = f.Open();
  std::vector<LogRecord> batch;
  REQUIRE(source->Read(batch, 2, std::stop_token()).ok());
  CHECK(Texts(batch) == std::vector<std::string>{"line 1", "line 2"});
  CHECK(Texts(ReadAll(*source, 2)) == std::vector<std::string>{"line 3", "line 4", "line 5"});
}

TEST_CASE("an EPIPE overrun is counted from the sequence gap and reported as its own record") {
  Fixture f;
  f.ring->AddText(1, "one");
  f.ring->AddText(2, "two");
  f.ring->Overrun();
  f.ring->AddText(10, "ten");
  auto source = f.Open();
  std::vector<LogRecord> got = ReadAll(*source);
  CHECK(Texts(got) ==
        std::vector<std::string>{"one", "two",
                                 "faultline: kmsg ring buffer overrun: 7 records lost", "ten"});
  REQUIRE(got.size() == 4);
  CHECK(got[2].origin == Origin::kKernel);
  CHECK(got[2].source == "kmsg");
  CHECK(got[2].cursor == std::string(kBootA) + ":9");
  CHECK(got[2].labels.at("lost") == "7");
  CHECK(source->stats().lost == 7);
}

TEST_CASE("a sequence jump without EPIPE is counted as lost too") {
  Fixture f;
  f.ring->AddText(5, "five");
  f.ring->AddText(8, "eight");
  auto source = f.Open();
  CHECK(Texts(ReadAll(*source)) ==
        std::vector<std::string>{"five", "faultline: kmsg ring buffer overrun: 2 records lost",
                                 "eight"});
  CHECK(source->stats().lost == 2);
}

TEST_CASE("records that do not parse are counted and skipped without a false gap") {
  Fixture f;
  f.ring->AddText(1, "one");
  f.ring->Add("6,2,oops,-;bad timestamp\n");
  f.ring->Add("complete garbage");
  f.ring->AddText(3, "three");
  auto source = f.Open();
  CHECK(Texts(ReadAll(*source)) == std::vector<std::string>{"one", "three"});
  CHECK(source->stats().parse_errors == 2);
  CHECK(source->stats().lost == 0);
}

TEST_CASE("without a checkpoint the whole ring is read by default, or only new records") {
  Fixture f;
  f.ring->AddText(1, "old");
  SUBCASE("whole ring") {
    auto source = f.Open();
    CHECK(f.ring->rewinds == 1);
    CHECK(Texts(ReadAll(*source)) == std::vector<std::string>{"old"});
  }
  SUBCASE("end") {
    KmsgSource::Options o = f.Options();
    o.start_policy = KmsgSource::StartPolicy::kEnd;
    auto source = f.Open(o);
    CHECK(f.ring->seeks_to_end == 1);
    f.ring->AddText(2, "new");
    CHECK(Texts(ReadAll(*source)) == std::vector<std::string>{"new"});
  }
}

TEST_CASE("a restart in the same boot resumes after the committed record, not the last read") {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.ring->AddText(i, "line " + std::to_string(i));
  {
    auto source = f.Open();
    std::vector<LogRecord> got = ReadAll(*source);
    REQUIRE(got.size() == 5);
    for (int i = 0; i < 3; ++i) source->Commit(got[i].cursor);  // 4 and 5 undelivered
    REQUIRE(source->SaveCheckpoint().ok());
  }
  CHECK(ReadFileForTest(f.dir / "state/kmsg.checkpoint").find(R"("seq":3)") != std::string::npos);
  f.ring->AddText(6, "line 6");
  auto restarted = f.Open();
  CHECK(Texts(ReadAll(*restarted)) == std::vector<std::string>{"line 4", "line 5", "line 6"});
  CHECK(restarted->stats().lost == 0);
}

TEST_CASE("records overwritten while the agent was down are reported as lost on resume") {
  Fixture f;
  for (int i = 1; i <= 3; ++i) f.ring->AddText(i, "line " + std::to_string(i));
  {
    auto source = f.Open();
    for (const LogRecord& r : ReadAll(*source)) source->Commit(r.cursor);
    REQUIRE(source->SaveCheckpoint().ok());
  }
  // The ring wrapped: 4 and 5 are gone, 6 and 7 remain.
  f.ring->entries.clear();
  f.ring->AddText(6, "line 6");
  f.ring->AddText(7, "line 7");
  auto restarted = f.Open();
  CHECK(Texts(ReadAll(*restarted)) ==
        std::vector<std::string>{"faultline: kmsg ring buffer overrun: 2 records lost", "line 6",
                                 "line 7"});
  CHECK(restarted->stats().lost == 2);
}

TEST_CASE("a checkpoint from another boot means reading the whole ring") {
  Fixture f;
  f.ring->AddText(1, "boot A line");
  {
    auto source = f.Open();
    for (const LogRecord& r : ReadAll(*source)) source->Commit(r.cursor);
    REQUIRE(source->SaveCheckpoint().ok());
  }
  f.SetBoot(kBootB);
  f.ring->entries.clear();
  f.ring->AddText(0, "boot B first");
  f.ring->AddText(1, "boot B second");
  auto rebooted = f.Open();
  std::vector<LogRecord> got = ReadAll(*rebooted);
  CHECK(Texts(got) == std::vector<std::string>{"boot B first", "boot B second"});
  CHECK(got.back().cursor == std::string(kBootB) + ":1");
  // A cursor of the old boot is not ours any more.
  rebooted->Commit(std::string(kBootA) + ":1");
  rebooted->Commit(got[0].cursor);
  REQUIRE(rebooted->SaveCheckpoint().ok());
  CHECK(ReadFileForTest(f.dir / "state/kmsg.checkpoint").find(kBootB) != std::string::npos);
}

TEST_CASE("a corrupt or foreign checkpoint is logged and ignored") {
  Fixture f;
  f.ring->AddText(1, "one");
  std::vector<std::string> logged;
  SetLogSinkForTest([&](std::string_view line) { logged.emplace_back(line); });
  SUBCASE("corrupt") { f.dir.Write("state/kmsg.checkpoint", "not a checkpoint\x01\x02"); }
  SUBCASE("foreign") {
    CheckpointStore other(f.dir / "state", "kmsg");
    REQUIRE(other.Save(R"({"inode": 5, "offset": 9})").ok());
  }
  SUBCASE("wrong types") {
    CheckpointStore other(f.dir / "state", "kmsg");
    REQUIRE(other.Save(R"({"boot_id": 5, "seq": "x"})").ok());
  }
  auto source = f.Open();
  SetLogSinkForTest(nullptr);
  CHECK(Texts(ReadAll(*source)) == std::vector<std::string>{"one"});
  CHECK(source->stats().parse_errors == 1);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0].find("\"warn\"") != std::string::npos);
  CHECK(logged[0].find("checkpoint") != std::string::npos);
}

TEST_CASE("without a state directory nothing is saved and SaveCheckpoint succeeds") {
  Fixture f;
  f.ring->AddText(1, "one");
  auto source = f.Open(f.Options(/*with_state=*/false));
  for (const LogRecord& r : ReadAll(*source)) source->Commit(r.cursor);
  CHECK(source->SaveCheckpoint().ok());
  CHECK_FALSE(std::filesystem::exists(f.dir / "state"));
}

TEST_CASE("a missing boot id file is an error, not a guess") {
  Fixture f;
  KmsgSource::Options o = f.Options();
  o.boot_id_path = f.dir / "nope";
  Result<std::unique_ptr<KmsgSource>> s =
      KmsgSource::OpenWithDevice(o, std::make_unique<FakeKmsgDevice>(f.ring), f.clock);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code() == StatusCode::kUnavailable);
}

TEST_CASE("a Read blocked on an idle device returns promptly when stop is requested") {
  Fixture f;
  f.ring->idle_is_stop = false;
  auto source = f.Open();
  std::stop_source stop;
  std::vector<LogRecord> out;
  std::chrono::steady_clock::time_point requested;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));  // let Read block first
    requested = std::chrono::steady_clock::now();
    stop.request_stop();
  });
  Status s = source->Read(out, 10, stop.get_token());
  auto returned = std::chrono::steady_clock::now();
  stopper.join();
  CHECK(s.ok());
  CHECK(out.empty());
  CHECK(returned - requested < milliseconds(200));
}

}  // namespace
}  // namespace faultline
