// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/exec_check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

namespace faultline {
namespace {

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string Trim(std::string s) {
  const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.back())) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && blank(s[i])) ++i;
  return s.substr(i);
}

// Kills the child's process group and reaps the leader.
void KillGroup(pid_t pid, int* wait_status) {
  kill(-pid, SIGKILL);
  while (waitpid(pid, wait_status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::map<std::string, std::string> DefaultCheckEnvironment() {
  return {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
}

ExecOutcome RunCommand(const std::string& path, const std::vector<std::string>& args,
                       const std::map<std::string, std::string>& env,
                       const std::string& working_dir, std::size_t max_output,
                       std::stop_token stop) {
  ExecOutcome out;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    out.start_error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  // Nothing of the agent's leaks into a check: no socket, no checkpoint.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, to kill it whole
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // the agent blocks signals for sigwait
  sigset_t defaults;
  sigfillset(&defaults);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string entry = k;
    entry += '=';
    entry += v;
    env_strings.push_back(std::move(entry));
  }
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string program = path;
  if (!program.empty() && program[0] != '/') {
    program = (std::filesystem::path(working_dir) / program).lexically_normal().string();
  }
  std::vector<std::string> argv_strings = {program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  write_end.reset();
  if (rc != 0) {
    out.start_error = program + ": " + std::strerror(rc);
    return out;
  }
  out.started = true;

  int wait_status = 0;
  bool reaped = false;
  bool eof = false;
  auto leader_gone_at = std::chrono::steady_clock::time_point::max();
  char buf[4096];
  for (;;) {
    if (stop.stop_requested()) {
      out.stopped = true;
      KillGroup(pid, &wait_status);  // reaps the leader
      break;
    }
    if (!eof) {
      pollfd p{read_end.get(), POLLIN, 0};
      const int n = poll(&p, 1, 20);
      if (n > 0) {
        const ssize_t got = read(read_end.get(), buf, sizeof(buf));
        if (got > 0) {
          const std::size_t room =
              max_output > out.output.size() ? max_output - out.output.size() : 0;
          out.output.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(got)));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!reaped) {
      const pid_t w = waitpid(pid, &wait_status, WNOHANG);
      if (w == pid) {
        reaped = true;
        leader_gone_at = std::chrono::steady_clock::now();
      }
    }
    if (reaped && eof) break;
    // The leader is gone but someone in its group still holds stdout:
    // give them a moment, then end them too.
    if (reaped &&
        std::chrono::steady_clock::now() - leader_gone_at > std::chrono::milliseconds(200)) {
      kill(-pid, SIGKILL);
      break;
    }
  }
  if (WIFEXITED(wait_status) && !out.stopped) {
    out.exited = true;
    out.exit_status = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    out.signal = WTERMSIG(wait_status);
  }
  out.output = Trim(std::move(out.output));
  return out;
}

std::vector<CheckFinding> ExecCheck::Run(std::stop_token stop) {
  ExecOutcome r = RunCommand(options_.path, options_.args, options_.env, options_.working_dir,
                             options_.max_output_length, stop);
  if (r.stopped) return {};  // timed out: CheckSource has reported it hung
  CheckFinding f;
  f.fields = {{"device", "node"}, {"counter", "exit"}};
  if (!r.started) {
    f.status = CheckStatus::kError;
    f.fields.emplace_back("value", "spawn-failed");
    f.message = "cannot run " + r.start_error;
  } else if (r.exited) {
    f.status = r.exit_status == 0   ? CheckStatus::kOk
               : r.exit_status == 1 ? CheckStatus::kFail
                                    : CheckStatus::kUnknown;
    f.fields.emplace_back("value", std::to_string(r.exit_status));
    f.message = r.output;
  } else {
    f.status = CheckStatus::kUnknown;
    const char* sig = sigabbrev_np(r.signal);
    f.fields.emplace_back("value", std::string("SIG") + (sig ? sig : std::to_string(r.signal)));
    f.message = r.output;
  }
  if (!options_.type.empty()) f.fields.emplace_back("type", options_.type);
  if (!options_.condition.empty()) f.fields.emplace_back("condition", options_.condition);
  if (!options_.reason.empty()) f.fields.emplace_back("reason", options_.reason);
  return {f};
}

}  // namespace faultline
