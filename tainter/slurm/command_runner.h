// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace faultline {

// What one run of a program printed and how it ended.
struct CommandOutput {
  int exit_code = 0;  // the program's exit status; -1 when killed by a signal
  std::string out;    // stdout, cut at the runner's output limit
  std::string err;    // stderr, cut at the runner's output limit
};

// Runs programs with an argument vector (never a shell: a node name or a
// reason text is an argument, not a command line), a fixed environment, no
// inherited file descriptors, and a hard deadline after which the program
// is killed. The Slurm actuator runs scontrol through it.
//
// Thread-safety: Run may be called from several threads at once (it keeps
// no state).
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // kUnavailable: the program could not be started, or ran past `timeout`
  // (it was killed). A non-zero exit is not an error here: the caller reads
  // exit_code and err.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout) = 0;
};

// The real one: posix_spawn, stdout and stderr through pipes, SIGKILL at
// the deadline. `env` is the whole environment ("KEY=value" each).
class SpawnRunner final : public CommandRunner {
 public:
  explicit SpawnRunner(std::vector<std::string> env, std::size_t max_output = 4 << 20)
      : env_(std::move(env)), max_output_(max_output) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) override;

 private:
  std::vector<std::string> env_;
  std::size_t max_output_;
};

}  // namespace faultline
