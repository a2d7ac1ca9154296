// SPDX-License-Identifier: Apache-2.0
// ibcounters: sysfs value parsing and snapshot diffs (pure), then the source
// on a fake sysfs tree in a TempDir.
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <doctest/doctest.h>

#include "collector/sources/ibcounters_diff.h"
#include "collector/sources/ibcounters_source.h"
#include "tests/fakes/fake_clock.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

IbPortState Port(std::string state, std::string phys, std::uint64_t downed,
                 std::uint64_t recovery = 0, std::uint64_t symbol = 0) {
  IbPortState p;
  p.state = std::move(state);
  p.phys_state = std::move(phys);
  p.counters = {
      {"link_downed", downed}, {"link_error_recovery", recovery}, {"symbol_error", symbol}};
  return p;
}

std::vector<std::string> Texts(const std::vector<IbChange>& changes) {
  std::vector<std::string> out;
  out.reserve(changes.size());
  for (const IbChange& c : changes) out.push_back(c.text);
  return out;
}

std::vector<std::string> Texts(const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  out.reserve(records.size());
  for (const LogRecord& r : records) out.push_back(r.text);
  return out;
}

TEST_CASE("sysfs port states lose their numeric prefix and whitespace") {
  CHECK(ParseSysfsState("4: ACTIVE\n") == std::optional<std::string>("ACTIVE"));
  CHECK(ParseSysfsState("5: LinkUp\n") == std::optional<std::string>("LinkUp"));
  CHECK(ParseSysfsState("1: DOWN") == std::optional<std::string>("DOWN"));
  CHECK(ParseSysfsState("Polling") == std::optional<std::string>("Polling"));
  CHECK(ParseSysfsState("12:") == std::nullopt);
  CHECK(ParseSysfsState(" \n") == std::nullopt);
}

TEST_CASE("sysfs counters are decimal numbers or nothing") {
  CHECK(ParseSysfsCounter("4\n") == std::optional<std::uint64_t>(4));
  CHECK(ParseSysfsCounter("  18446744073709551615 ") ==
        std::optional<std::uint64_t>(18446744073709551615ULL));
  CHECK(ParseSysfsCounter("18446744073709551616") == std::nullopt);
  CHECK(ParseSysfsCounter("-1") == std::nullopt);
  CHECK(ParseSysfsCounter("N/A") == std::nullopt);
  CHECK(ParseSysfsCounter("12abc") == std::nullopt);
  CHECK(ParseSysfsCounter("") == std::nullopt);
}

TEST_CASE("state changes and counter increases become records, equal snapshots none") {
  IbSnapshot before = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 3, 0, 7)}};
  CHECK(DiffIbSnapshots(before, before).empty());
  IbSnapshot after = {{{"mlx5_0", "1"}, Port("DOWN", "Polling", 4, 2, 7)}};
  std::vector<IbChange> changes = DiffIbSnapshots(before, after);
  CHECK(Texts(changes) ==
        std::vector<std::string>{"mlx5_0 port 1 state ACTIVE -> DOWN",
                                 "mlx5_0 port 1 phys_state LinkUp -> Polling",
                                 "mlx5_0 port 1 link_downed +1 (total 4)",
                                 "mlx5_0 port 1 link_error_recovery +2 (total 2)"});
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].counter == "state");
  CHECK(changes[2].counter == "link_downed");
  CHECK(changes[2].port == IbPortKey{"mlx5_0", "1"});
}

TEST_CASE("a counter that goes down is a new baseline, not a record") {
  IbSnapshot before = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 9)}};
  IbSnapshot reset = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 0)}};
  CHECK(DiffIbSnapshots(before, reset).empty());
  IbSnapshot later = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 1)}};
  CHECK(Texts(DiffIbSnapshots(reset, later)) ==
        std::vector<std::string>{"mlx5_0 port 1 link_downed +1 (total 1)"});
}

TEST_CASE("a value unreadable before is a baseline when it becomes readable") {
  IbPortState unknown;
  IbSnapshot before = {{{"mlx5_0", "1"}, unknown}};
  IbSnapshot after = {{{"mlx5_0", "1"}, Port("DOWN", "Disabled", 5)}};
  CHECK(DiffIbSnapshots(before, after).empty());
}

TEST_CASE("ports that appear or disappear are reported") {
  IbSnapshot before = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 0)}};
  IbSnapshot after = {{{"mlx5_1", "1"}, Port("INIT", "LinkUp", 0)}};
  std::vector<IbChange> changes = DiffIbSnapshots(before, after);
  CHECK(Texts(changes) == std::vector<std::string>{"mlx5_1 port 1 appeared, state INIT",
                                                   "mlx5_0 port 1 disappeared"});
  CHECK(changes[0].counter == "port");
}

TEST_CASE("at the first start only ports that are not ACTIVE are reported") {
  IbSnapshot first = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 0)},
                      {{"mlx5_0", "2"}, Port("DOWN", "Disabled", 0)}};
  CHECK(Texts(DescribeInitialIbSnapshot(first)) ==
        std::vector<std::string>{"mlx5_0 port 2 state DOWN at start"});
}

TEST_CASE("snapshots survive the checkpoint JSON and bad JSON is rejected") {
  IbSnapshot s = {{{"mlx5_0", "1"}, Port("ACTIVE", "LinkUp", 3, 1, 2)},
                  {{"mlx5_1", "2"}, IbPortState{}}};
  Result<IbSnapshot> back = IbSnapshotFromJson(IbSnapshotToJson(s));
  REQUIRE(back.ok());
  CHECK(*back == s);
  for (const char* bad : {"", "[]", R"({"ports":{}})", R"({"ports":[{"device":"x"}]})",
                          R"({"ports":[{"device":"x","port":"1","counters":{"a":-1}}]})"}) {
    CAPTURE(bad);
    CHECK(IbSnapshotFromJson(bad).error().code() == StatusCode::kInvalidArgument);
  }
}

// A fake /sys with InfiniBand ports.
struct FakeSysfs {
  TempDir dir;
  std::string root = dir / "sys";

  void Set(const std::string& dev, const std::string& port, const std::string& file,
           const std::string& value) {
    dir.Write("sys/class/infiniband/" + dev + "/ports/" + port + "/" + file, value + "\n");
  }
  void AddPort(const std::string& dev, const std::string& port, const std::string& state,
               const std::string& phys, int downed) {
    Set(dev, port, "state", state);
    Set(dev, port, "phys_state", phys);
    Set(dev, port, "counters/link_downed", std::to_string(downed));
    Set(dev, port, "counters/link_error_recovery", "0");
    Set(dev, port, "counters/symbol_error", "0");
  }
  void RemoveDevice(const std::string& dev) {
    std::filesystem::remove_all(dir.path() / "sys/class/infiniband" / dev);
  }

  IbCountersSource::Options Options() {
    IbCountersSource::Options o;
    o.sysfs_root = root;
    o.interval = milliseconds(10);
    o.state_dir = dir / "state";
    return o;
  }
};

// Reads until `want` records arrived or the timeout passed.
std::vector<LogRecord> ReadRecords(Source& source, std::size_t want,
                                   milliseconds timeout = milliseconds(3000)) {
  std::vector<LogRecord> got;
  StopAfter deadline(timeout);
  while (got.size() < want && !deadline.expired()) {
    REQUIRE(source.Read(got, want - got.size(), deadline.token()).ok());
  }
  return got;
}

TEST_CASE("the source reports a port DOWN at start, then changes with labels") {
  FakeSysfs sys;
  FakeClock clock;
  sys.AddPort("mlx5_0", "1", "4: ACTIVE", "5: LinkUp", 3);
  sys.AddPort("mlx5_0", "2", "1: DOWN", "3: Disabled", 0);
  auto source = IbCountersSource::Open(sys.Options(), clock);
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadRecords(**source, 1);
  CHECK(Texts(got) == std::vector<std::string>{"mlx5_0 port 2 state DOWN at start"});

  sys.Set("mlx5_0", "1", "state", "1: DOWN");
  sys.Set("mlx5_0", "1", "counters/link_downed", "4");
  got = ReadRecords(**source, 2);
  CHECK(Texts(got) == std::vector<std::string>{"mlx5_0 port 1 state ACTIVE -> DOWN",
                                               "mlx5_0 port 1 link_downed +1 (total 4)"});
  REQUIRE(got.size() == 2);
  CHECK(got[1].source == "ibcounters");
  CHECK(got[1].origin == Origin::kIbCounters);
  CHECK(got[1].labels == Labels{{"device", "mlx5_0"}, {"port", "1"}, {"counter", "link_downed"}});
  CHECK(got[1].time == clock.Now());
  CHECK((*source)->stats().records == 3);
}

TEST_CASE("a restart reports the changes made while the agent was down, once") {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", "1", "4: ACTIVE", "5: LinkUp", 3);
  {
    auto source = IbCountersSource::Open(sys.Options());
    REQUIRE(source.ok());
    REQUIRE((*source)->SaveCheckpoint().ok());  // the baseline had no records: committed
  }
  sys.Set("mlx5_0", "1", "counters/link_downed", "5");
  {
    auto source = IbCountersSource::Open(sys.Options());
    REQUIRE(source.ok());
    std::vector<LogRecord> got = ReadRecords(**source, 1);
    CHECK(Texts(got) == std::vector<std::string>{"mlx5_0 port 1 link_downed +2 (total 5)"});
    SUBCASE("committed: not reported again") {
      for (const LogRecord& r : got) (*source)->Commit(r.cursor);
      REQUIRE((*source)->SaveCheckpoint().ok());
      source->reset();
      auto again = IbCountersSource::Open(sys.Options());
      REQUIRE(again.ok());
      sys.Set("mlx5_0", "1", "counters/symbol_error", "1");
      CHECK(Texts(ReadRecords(**again, 1)) ==
            std::vector<std::string>{"mlx5_0 port 1 symbol_error +1 (total 1)"});
    }
    SUBCASE("not committed: reported again after the restart") {
      REQUIRE((*source)->SaveCheckpoint().ok());
      source->reset();
      auto again = IbCountersSource::Open(sys.Options());
      REQUIRE(again.ok());
      CHECK(Texts(ReadRecords(**again, 1)) ==
            std::vector<std::string>{"mlx5_0 port 1 link_downed +2 (total 5)"});
    }
  }
}

// Issue 11.5: the event id derives from the cursor. A record re-sent after a
// restart must keep its cursor (or the tainter counts it twice), and a new
// record must never reuse an old one's (or the tainter drops it).
TEST_CASE("ibcounters cursors are the same for a re-sent record and unique across restarts") {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", "1", "4: ACTIVE", "5: LinkUp", 3);
  {
    auto source = IbCountersSource::Open(sys.Options());
    REQUIRE(source.ok());
    REQUIRE((*source)->SaveCheckpoint().ok());
  }
  std::vector<std::string> cursors;
  std::string first;
  {
    auto source = IbCountersSource::Open(sys.Options());
    REQUIRE(source.ok());
    // Polls that find nothing must not shift the numbering of what follows.
    CHECK(ReadRecords(**source, 1, milliseconds(100)).empty());
    sys.Set("mlx5_0", "1", "counters/link_downed", "5");
    std::vector<LogRecord> got = ReadRecords(**source, 1);
    REQUIRE(got.size() == 1);
    first = got[0].cursor;
  }
  // Not committed: re-sent after the restart with the same cursor.
  for (const char* state : {"1: DOWN", "4: ACTIVE", "1: DOWN"}) {
    auto source = IbCountersSource::Open(sys.Options());
    REQUIRE(source.ok());
    std::vector<LogRecord> got = ReadRecords(**source, 1);
    REQUIRE(got.size() == 1);
    if (cursors.empty()) CHECK(got[0].cursor == first);
    cursors.push_back(got[0].cursor);
    (*source)->Commit(got[0].cursor);
    REQUIRE((*source)->SaveCheckpoint().ok());
    // The next process sees a flap: ACTIVE -> DOWN twice must not share a cursor.
    sys.Set("mlx5_0", "1", "state", state);
  }
  auto source = IbCountersSource::Open(sys.Options());
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadRecords(**source, 1);
  REQUIRE(got.size() == 1);
  cursors.push_back(got[0].cursor);
  CHECK(std::set<std::string>(cursors.begin(), cursors.end()).size() == cursors.size());
}

TEST_CASE("devices that disappear and reappear are reported") {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", "1", "4: ACTIVE", "5: LinkUp", 0);
  auto source = IbCountersSource::Open(sys.Options());
  REQUIRE(source.ok());
  sys.RemoveDevice("mlx5_0");
  CHECK(Texts(ReadRecords(**source, 1)) == std::vector<std::string>{"mlx5_0 port 1 disappeared"});
  sys.AddPort("mlx5_0", "1", "2: INIT", "5: LinkUp", 0);
  CHECK(Texts(ReadRecords(**source, 1)) ==
        std::vector<std::string>{"mlx5_0 port 1 appeared, state INIT"});
}

TEST_CASE("an unparsable sysfs value is counted and keeps the previous reading") {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", "1", "4: ACTIVE", "5: LinkUp", 2);
  auto source = IbCountersSource::Open(sys.Options());
  REQUIRE(source.ok());
  sys.Set("mlx5_0", "1", "counters/link_downed", "garbage");
  sys.Set("mlx5_0", "1", "state", "1: DOWN");
  CHECK(Texts(ReadRecords(**source, 1)) ==
        std::vector<std::string>{"mlx5_0 port 1 state ACTIVE -> DOWN"});
  CHECK((*source)->stats().parse_errors >= 1);
  sys.Set("mlx5_0", "1", "counters/link_downed", "3");
  CHECK(Texts(ReadRecords(**source, 1)) ==
        std::vector<std::string>{"mlx5_0 port 1 link_downed +1 (total 3)"});
}

TEST_CASE("a corrupt ibcounters checkpoint is ignored and a new baseline taken") {
  FakeSysfs sys;
  sys.AddPort("mlx5_0", "1", "1: DOWN", "3: Disabled", 0);
  sys.dir.Write("state/ibcounters.checkpoint", "junk");
  auto source = IbCountersSource::Open(sys.Options());
  REQUIRE(source.ok());
  CHECK((*source)->stats().parse_errors == 1);
  CHECK(Texts(ReadRecords(**source, 1)) ==
        std::vector<std::string>{"mlx5_0 port 1 state DOWN at start"});
}

TEST_CASE("a node without InfiniBand polls an empty tree without error") {
  FakeSysfs sys;
  auto source = IbCountersSource::Open(sys.Options());
  REQUIRE(source.ok());
  CHECK(ReadRecords(**source, 1, milliseconds(100)).empty());
}

TEST_CASE("an ibcounters Read waiting for the next poll returns promptly on stop") {
  FakeSysfs sys;
  IbCountersSource::Options o = sys.Options();
  o.interval = std::chrono::minutes(10);
  auto source = IbCountersSource::Open(o);
  REQUIRE(source.ok());
  std::stop_source stop;
  std::chrono::steady_clock::time_point requested;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    requested = std::chrono::steady_clock::now();
    stop.request_stop();
  });
  std::vector<LogRecord> out;
  CHECK((*source)->Read(out, 10, stop.get_token()).ok());
  auto returned = std::chrono::steady_clock::now();
  stopper.join();
  CHECK(out.empty());
  CHECK(returned - requested < milliseconds(200));
}

TEST_CASE("an interval that is not positive is refused") {
  IbCountersSource::Options o;
  o.interval = milliseconds(0);
  CHECK(IbCountersSource::Open(o).error().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faultline
