// SPDX-License-Identifier: Apache-2.0
// The exec check: node-problem-detector's custom-plugin protocol, timeouts
// that kill the whole process group, capped output, unmodified NPD configs.
#include "collector/checks/exec_check.h"

#include <signal.h>

#include <fstream>
#include <thread>

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "collector/checks/npd_plugin_config.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

const std::string kNpdDir = std::string(FL_SOURCE_DIR) + "/tests/data/checks/npd";
const std::string kFakes = std::string(FL_SOURCE_DIR) + "/tests/fakes";

ExecCheck::Options Shell(const std::string& script) {
  ExecCheck::Options o;
  o.name = "sh";
  o.path = "/bin/sh";
  o.args = {"-c", script};
  o.env = DefaultCheckEnvironment();
  return o;
}

CheckFinding RunOnce(const ExecCheck::Options& o) {
  ExecCheck check(o);
  std::vector<CheckFinding> f = check.Run({});
  REQUIRE(f.size() == 1);
  return f[0];
}

TEST_CASE("exit 0 is ok, 1 is a problem, anything else unknown, and stdout is the message") {
  CheckFinding ok = RunOnce(Shell("echo all good; exit 0"));
  CHECK(ok.status == CheckStatus::kOk);
  CHECK(ok.message == "all good");
  CHECK(ok.Field("value") == "0");
  CheckFinding bad = RunOnce(Shell("echo '  GPU count mismatch  '; exit 1"));
  CHECK(bad.status == CheckStatus::kFail);
  CHECK(bad.message == "GPU count mismatch");
  CheckFinding unknown = RunOnce(Shell("exit 2"));
  CHECK(unknown.status == CheckStatus::kUnknown);
  CHECK(unknown.Field("value") == "2");
  CheckFinding killed = RunOnce(Shell("kill -SEGV $$"));
  CHECK(killed.status == CheckStatus::kUnknown);
  CHECK(killed.Field("value") == "SIGSEGV");
}

TEST_CASE("output is cut at max_output_length and a flood never blocks the child") {
  ExecCheck::Options o = Shell("head -c 1000000 /dev/zero | tr '\\0' x; echo; exit 1");
  o.max_output_length = 10;
  CheckFinding f = RunOnce(o);
  CHECK(f.status == CheckStatus::kFail);
  CHECK(f.message == "xxxxxxxxxx");
}

TEST_CASE("the environment and working directory are exactly the configured ones") {
  TempDir dir;
  ExecCheck::Options o = Shell("echo \"$(pwd) ${HOME:-nohome} $SECRET\"");
  o.env = {{"PATH", "/usr/bin:/bin"}, {"SECRET", "given"}};
  o.working_dir = dir.path().string();
  o.max_output_length = 4096;
  CHECK(RunOnce(o).message == dir.path().string() + " nohome given");
}

TEST_CASE("a command that cannot start is an error record, not a crash") {
  ExecCheck::Options o;
  o.name = "missing";
  o.path = "/nonexistent/check.sh";
  o.env = DefaultCheckEnvironment();
  CheckFinding f = RunOnce(o);
  CHECK(f.status == CheckStatus::kError);
  CHECK(f.Field("value") == "spawn-failed");
  CHECK(f.message == "cannot run /nonexistent/check.sh: No such file or directory");

  SUBCASE("a working directory that does not exist") {
    ExecCheck::Options w = Shell("exit 0");
    w.working_dir = "/nonexistent-dir";
    CHECK(RunOnce(w).status == CheckStatus::kError);
  }
}

bool ProcessAlive(pid_t pid) {
  // A zombie nobody reaps (a container without an init) counts as gone.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST_CASE("on timeout the whole process group is killed and the run is reported hung") {
  TempDir dir;
  const std::string state = dir.Write("gpus", "HANG\n");
  ExecCheck::Options o;
  o.name = "npd-gpu-count";
  o.path = kNpdDir + "/check_gpu_count.sh";
  o.args = {"8"};
  o.env = {{"PATH", kFakes + ":/usr/bin:/bin"}, {"FAKE_NVIDIA_SMI_STATE", state}};
  std::vector<CheckSource::Entry> entries;
  CheckSchedule schedule;
  schedule.interval = milliseconds(60'000);
  schedule.timeout = milliseconds(500);
  entries.push_back({std::make_unique<ExecCheck>(o), schedule, ""});
  auto source = CheckSource::Open({}, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadChecks(**source, 1, milliseconds(3000));
  REQUIRE(got.size() == 1);
  CHECK(got[0].text ==
        "check=npd-gpu-count status=hung device=node counter=run value=500ms "
        "msg=the check did not finish within its timeout");
  // nvidia-smi (a grandchild, stuck) is gone with its script.
  pid_t pid = 0;
  for (int i = 0; i < 100 && pid == 0; ++i) {
    std::ifstream(state + ".pid") >> pid;
    std::this_thread::sleep_for(milliseconds(10));
  }
  REQUIRE(pid > 0);
  bool alive = true;
  for (int i = 0; i < 200 && alive; ++i) {
    alive = ProcessAlive(pid);
    if (alive) std::this_thread::sleep_for(milliseconds(10));
  }
  CHECK_FALSE(alive);
}

TEST_CASE("an unmodified NPD custom-plugin-monitor config runs the AKS-style GPU-count plugin") {
  std::string json = ReadFileForTest(kNpdDir + "/gpu-count-custom-plugin-monitor.json");
  TempDir dir;
  const std::string state = dir.Write("gpus", "");
  std::map<std::string, std::string> env = {{"PATH", kFakes + ":/usr/bin:/bin"},
                                            {"FAKE_NVIDIA_SMI_STATE", state}};
  Result<NpdPluginConfig> config =
      ParseNpdPluginConfig(json, "gpu-count-custom-plugin-monitor.json", env, kNpdDir);
  REQUIRE(config.ok());
  CHECK(config->source == "gpu-count-custom-plugin-monitor");
  CHECK(config->invoke_interval == milliseconds(10'000));
  CHECK(config->concurrency == 1);
  REQUIRE(config->rules.size() == 1);
  CHECK(config->timeouts[0] == milliseconds(3000));
  const ExecCheck::Options& rule = config->rules[0];
  CHECK(rule.name == "npd.gpu-count-custom-plugin-monitor.0.GPUCountMismatch");
  CHECK(rule.max_output_length == 80);

  auto write_gpus = [&](int n) {
    std::string lines;
    for (int i = 0; i < n; ++i) lines += "00000000:" + std::to_string(18 + i) + ":00.0\n";
    dir.Write("gpus", lines);
  };
  ExecCheck check(rule);
  write_gpus(8);
  std::vector<CheckFinding> f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(FormatCheckText(rule.name, f[0]) ==
        "check=npd.gpu-count-custom-plugin-monitor.0.GPUCountMismatch status=ok device=node "
        "counter=exit value=0 type=permanent condition=GPUMissing reason=GPUCountMismatch "
        "msg=GPU count is 8");
  write_gpus(7);
  f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(f[0].status == CheckStatus::kFail);
  CHECK(f[0].message == "GPU count mismatch: expected 8, found 7");
  dir.Write("gpus", "FAIL\n");
  f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(f[0].status == CheckStatus::kUnknown);
  CHECK(f[0].message.size() == 80);  // NVIDIA's long message, cut
  CHECK(f[0].message.rfind("nvidia-smi failed: NVIDIA-SMI has failed", 0) == 0);
}

TEST_CASE("an NHC-style check reports its first failing check") {
  TempDir root;
  root.Write("proc/mounts", "/dev/sda1 / ext4 rw,relatime 0 0\n");
  root.Write("proc/meminfo", "MemTotal: 2097152 kB\nMemAvailable: 2000000 kB\n");
  root.Write("dev/nvidiactl", "");
  ExecCheck::Options o;
  o.name = "nhc";
  o.path = kNpdDir + "/nhc_style_check.sh";
  o.env = {{"PATH", "/usr/bin:/bin"}, {"NHC_ROOT", root.path().string()}};
  o.max_output_length = 200;
  CHECK(RunOnce(o).status == CheckStatus::kOk);
  root.Write("proc/mounts", "/dev/sda1 / ext4 ro,relatime 0 0\n");
  CheckFinding f = RunOnce(o);
  CHECK(f.status == CheckStatus::kFail);
  CHECK(f.message ==
        "ERROR:  nhc:  Health check failed:  Check check_fs_mount_rw / failed: not mounted "
        "read-write");
}

TEST_CASE("malformed NPD configs are refused with the reason") {
  const std::map<std::string, std::string> env;
  auto error = [&](std::string_view json) {
    Result<NpdPluginConfig> c = ParseNpdPluginConfig(json, "x.json", env, "/");
    REQUIRE(!c.ok());
    return c.error().message();
  };
  CHECK(error("{") == "x.json: not a JSON object");
  CHECK(error(R"({"plugin":"filelog","source":"s","rules":[]})").find("not 'custom'") !=
        std::string::npos);
  CHECK(error(R"({"plugin":"custom","source":"s","rules":[{"type":"permanent","path":"/x"}]})") ==
        "x.json: rules[0] is permanent but names no condition");
  CHECK(error(R"({"plugin":"custom","source":"s","rules":[{"type":"temporary"}]})") ==
        "x.json: rules[0] has no path");
  CHECK(error(R"({"plugin":"custom","source":"s","pluginConfig":{"timeout":"5 s"},)"
              R"("rules":[{"type":"temporary","path":"/x"}]})") ==
        "x.json: pluginConfig.timeout '5 s' is not a positive duration");
}

TEST_CASE("Go durations parse as NPD writes them") {
  CHECK(ParseGoDuration("30s") == milliseconds(30'000));
  CHECK(ParseGoDuration("1m30s") == milliseconds(90'000));
  CHECK(ParseGoDuration("1.5s") == milliseconds(1500));
  CHECK(ParseGoDuration("500ms") == milliseconds(500));
  CHECK(ParseGoDuration("2h") == milliseconds(7'200'000));
  CHECK(!ParseGoDuration("5").has_value());
  CHECK(!ParseGoDuration("s").has_value());
  CHECK(!ParseGoDuration("").has_value());
}

}  // namespace
}  // namespace faultline
