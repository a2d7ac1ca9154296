// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "collector/checks/check.h"

namespace faultline {

// Runs a command and reads node-problem-detector's custom-plugin protocol:
// exit status 0 = ok, 1 = problem, anything else (or killed by a signal) =
// unknown; stdout, trimmed and cut at `max_output_length` bytes, is the
// message. Operators' existing NPD plugins and LBNL NHC-style scripts run
// unchanged.
//
// The child: posix_spawn'ed with exactly `env` as its environment, in
// `working_dir`, stdin /dev/null, stderr /dev/null, in a process group of its
// own. When the run is stopped (its timeout: CheckSource requests stop), the
// whole group gets SIGKILL, so a script's own children (nvidia-smi stuck in
// the driver) go too; the same when the leader exits while a straggler still
// holds stdout open. stdout is read while the child runs (it never blocks
// on a full pipe); bytes past the cap are read and dropped.
//
// Findings: one per run,
//   check=<name> status=ok|fail|unknown|error device=node counter=exit
//     value=<status|signal name|spawn-failed> [type=..] [condition=..] [reason=..] msg=<stdout>
// A command that cannot start (missing, not executable, bad working
// directory) is `status=error` with the reason, never a crash.
class ExecCheck final : public Check {
 public:
  struct Options {
    std::string name;  // the check's name (unique in the agent)
    std::string path;  // absolute, or relative to working_dir
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  // the child's whole environment
    std::string working_dir = "/";
    std::size_t max_output_length = 80;  // NPD's default
    // From an NPD rule, copied into the findings so rules can tell them apart.
    std::string type;  // "temporary" | "permanent" | ""
    std::string condition;
    std::string reason;
  };
  explicit ExecCheck(Options options) : options_(std::move(options)) {}

  // Check
  std::string_view name() const override { return options_.name; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

// What one run of a command gave, for ExecCheck and its tests.
struct ExecOutcome {
  bool started = false;
  std::string start_error;  // why it did not start
  bool exited = false;      // false: killed (timeout, stop) or by a signal
  int exit_status = -1;
  int signal = 0;
  bool stopped = false;  // killed because `stop` was requested
  std::string output;    // stdout, at most `max_output` bytes
};

// Runs `path args...` as described above and waits for it, or until `stop`.
ExecOutcome RunCommand(const std::string& path, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env,
                       const std::string& working_dir, std::size_t max_output,
                       std::stop_token stop);

// The default environment of exec checks: PATH only.
std::map<std::string, std::string> DefaultCheckEnvironment();

}  // namespace faultline
