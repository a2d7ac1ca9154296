// SPDX-License-Identifier: Apache-2.0
// The Slurm actuator's pure parts: what `scontrol show node` prints (text
// captured from Slurm 22.05.8, tests/tainter/slurm/README.md), the Reason
// faultline writes and its cut, the name mapping, and the shared valve file.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "tainter/slurm/command_runner.h"
#include "tainter/slurm/slurm_names.h"
#include "tainter/slurm/slurm_node_text.h"
#include "tainter/slurm/slurm_reason.h"
#include "tainter/slurm/valve_record_file.h"

namespace faultline {
namespace {

// Two nodes as slurmctld 22.05.8 printed them (no slurmd registered).
constexpr std::string_view kTwoNodes = R"(NodeName=gpu001 CoresPerSocket=1 
   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=N/A
   AvailableFeatures=(null)
   ActiveFeatures=(null)
   Gres=(null)
   NodeAddr=127.0.0.1 NodeHostName=localhost 
   RealMemory=1 AllocMem=0 FreeMem=N/A Sockets=8 Boards=1
   State=UNKNOWN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu 
   BootTime=None SlurmdStartTime=None
   LastBusyTime=2026-11-27T10:55:30
   CfgTRES=cpu=8,mem=1M,billing=8
   AllocTRES=
   CapWatts=n/a
   CurrentWatts=0 AveWatts=0
   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s

NodeName=gpu002 CoresPerSocket=1 
   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=N/A
   NodeAddr=127.0.0.1 NodeHostName=localhost 
   State=DOWN+DRAIN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu,debug 
   BootTime=2026-11-27T09:00:00 SlurmdStartTime=None
   Reason=operator: bad fan = replace [root@2026-11-27T10:55:11]
   Comment=hello world
   Extra={"faultline.dev/reasons":"[]"}
)";

TEST_CASE("scontrol show node: state, reason with its tag cut off, Extra, partitions") {
  std::vector<SlurmNode> nodes = ParseScontrolNodes(kTwoNodes);
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].name == "gpu001");
  CHECK(nodes[0].state == "UNKNOWN+NOT_RESPONDING");
  CHECK_FALSE(nodes[0].Drain());
  CHECK_FALSE(nodes[0].Down());
  CHECK(nodes[0].reason.empty());
  CHECK(nodes[0].boot_time.empty());
  CHECK(nodes[0].partitions == std::vector<std::string>{"gpu"});
  CHECK(nodes[1].name == "gpu002");
  CHECK(nodes[1].Drain());
  CHECK(nodes[1].Down());
  CHECK_FALSE(nodes[1].Fail());
  CHECK(nodes[1].reason == "operator: bad fan = replace");
  CHECK(nodes[1].reason_user == "root");
  CHECK(nodes[1].comment == "hello world");
  CHECK(nodes[1].extra == R"({"faultline.dev/reasons":"[]"})");
  CHECK(nodes[1].boot_time == "2026-11-27T09:00:00");
  CHECK(nodes[1].partitions == std::vector<std::string>{"gpu", "debug"});
}

TEST_CASE("scontrol show node: DRAIN is a flag, not a substring, and garbage is no node") {
  auto one = [](const std::string& state) {
    return ParseScontrolNodes("NodeName=n1\n   State=" + state + " ThreadsPerCore=1\n").at(0);
  };
  CHECK(one("IDLE+DRAIN").Drain());
  CHECK(one("MIXED+DRAIN+COMPLETING").Drain());
  CHECK_FALSE(one("IDLE+UNDRAIN").Drain());
  CHECK(one("DOWN").Down());
  CHECK_FALSE(one("IDLE").Down());
  CHECK(one("IDLE+FAIL").Fail());
  CHECK(ParseScontrolNodes("Unable to contact slurm controller (connect failure)\n").empty());
  CHECK(ParseScontrolNodes("").empty());
}

TEST_CASE("the Reason names faultline, the rule and the summary, and says how many more") {
  CHECK(SlurmReasonText("faultline:", "nvidia.xid", "Xid 79 on 0000:3b:00", 0, 120) ==
        "faultline: nvidia.xid: Xid 79 on 0000:3b:00");
  CHECK(SlurmReasonText("faultline:", "nvidia.xid", "Xid 79", 2, 120) ==
        "faultline: nvidia.xid: Xid 79 (+2 more)");
  // A newline would end scontrol's Reason= line: control characters become spaces.
  CHECK(SlurmReasonText("faultline:", "r", "a\nb\tc", 0, 120) == "faultline: r: a b c");
}

TEST_CASE("a long summary is cut at a character boundary, ending in ..., the count kept") {
  const std::string summary = "GPU " + std::string(200, 'x') + " \xc3\xa9\xc3\xa9";  // é é
  std::string r = SlurmReasonText("faultline:", "nvidia.xid", summary, 3, 60);
  CHECK(r.size() <= 60);
  CHECK(r.starts_with("faultline: nvidia.xid: GPU xxx"));
  CHECK(r.ends_with("... (+3 more)"));
  // Cut inside a two-byte character: the whole character goes.
  const std::string accents = std::string(10, 'a') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
  std::string cut = SlurmReasonText("f:", "r", accents, 0, 22);
  CHECK(cut.size() <= 22);
  CHECK(cut.ends_with("..."));
  const std::string body = cut.substr(0, cut.size() - 3);
  CHECK((static_cast<unsigned char>(body.back()) & 0xC0) != 0xC0);  // no lead byte left alone
  CHECK(IsFaultlineReason(r, "faultline:"));
  CHECK_FALSE(IsFaultlineReason("operator: faultline: said so", "faultline:"));
  CHECK_FALSE(IsFaultlineReason("anything", ""));
}

TEST_CASE("node names: the same by default, a pattern, or a map that wins both ways") {
  Result<SlurmNames> same = SlurmNames::Create("", {});
  REQUIRE(same);
  CHECK(same->ToSlurm("gpu001") == "gpu001");
  CHECK(same->ToFaultline("gpu001") == "gpu001");

  Result<SlurmNames> pattern = SlurmNames::Create("sc-{name}-ib", {{"odd-host", "gpu099"}});
  REQUIRE(pattern);
  CHECK(pattern->ToSlurm("gpu001") == "sc-gpu001-ib");
  CHECK(pattern->ToFaultline("sc-gpu001-ib") == "gpu001");
  CHECK_FALSE(pattern->ToFaultline("gpu001").has_value());  // outside the pattern: not ours
  CHECK_FALSE(pattern->ToFaultline("sc--ib").has_value());
  CHECK(pattern->ToSlurm("odd-host") == "gpu099");
  CHECK(pattern->ToFaultline("gpu099") == "odd-host");
  // The pattern may not reach a Slurm node the map gave to another name.
  Result<SlurmNames> clash = SlurmNames::Create("gpu{name}", {{"odd-host", "gpu010"}});
  REQUIRE(clash);
  CHECK(clash->ToSlurm("003") == "gpu003");
  CHECK_FALSE(clash->ToSlurm("010").has_value());
  CHECK_FALSE(pattern->ToFaultline("sc-odd-host-ib").has_value());

  CHECK_FALSE(SlurmNames::Create("gpu", {}));
  CHECK_FALSE(SlurmNames::Create("{name}-{name}", {}));
  CHECK_FALSE(SlurmNames::Create("{name}", {{"a", "n1"}, {"b", "n1"}}));
}

TEST_CASE("the valve file: created once, replaced only at the version read, a fence while held") {
  char dir_template[] = "/tmp/fl-valve-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string path = std::string(dir_template) + "/valve";
  ValveRecordFile a(path, std::chrono::milliseconds(300));
  ValveRecordFile b(path, std::chrono::milliseconds(300));  // another replica
  Result<SharedRecord> none = a.Get();
  REQUIRE(none);
  CHECK(none->resource_version.empty());
  REQUIRE(a.Put("one", "").ok());
  // a holds the lock until its drain is written: b's poll waits, its write too.
  CHECK(a.held());
  CHECK_FALSE(b.WaitUnheld(std::chrono::milliseconds(50)));
  CHECK(b.Put("two", "").code() == StatusCode::kUnavailable);
  a.Release();
  CHECK(b.WaitUnheld(std::chrono::milliseconds(50)));
  CHECK(b.Put("two", "").code() == StatusCode::kAborted);  // it exists now
  Result<SharedRecord> seen = b.Get();
  REQUIRE(seen);
  CHECK(seen->value == "one");
  REQUIRE(b.Put("two\nlines", seen->resource_version).ok());
  b.Release();
  CHECK(a.Put("stale", seen->resource_version).code() == StatusCode::kAborted);
  Result<SharedRecord> last = a.Get();
  REQUIRE(last);
  CHECK(last->value == "two\nlines");
  a.Release();
  std::filesystem::remove_all(dir_template);
}

TEST_CASE("scontrol's runner: argv as given, stdout and stderr apart, the exit code, a deadline") {
  SpawnRunner runner({"PATH=/usr/bin:/bin", "ONLY=this"});
  // A reason with spaces and quotes is one argument, never shell text.
  Result<CommandOutput> r = runner.Run(
      {"sh", "-c", "printf '%s|%s' \"$1\" \"$ONLY\"; echo oops >&2; exit 3", "sh", "a 'b' $(c)"},
      std::chrono::seconds(5));
  REQUIRE(r);
  CHECK(r->exit_code == 3);
  CHECK(r->out == "a 'b' $(c)|this");
  CHECK(r->err == "oops\n");
  // Past its deadline the program (and its process group) is killed.
  const auto start = std::chrono::steady_clock::now();
  Result<CommandOutput> slow =
      runner.Run({"sh", "-c", "sleep 5 & sleep 5"}, std::chrono::milliseconds(200));
  CHECK(slow.error().code() == StatusCode::kUnavailable);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  Result<CommandOutput> missing = runner.Run({"/nonexistent/scontrol"}, std::chrono::seconds(1));
  CHECK_FALSE(missing);
}

}  // namespace
}  // namespace faultline
