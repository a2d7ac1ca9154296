// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace faultline {
namespace {

// Closes both ends it holds on destruction.
struct Pipe {
  std::array<int, 2> fd{-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
  void CloseWrite() {
    if (fd[1] >= 0) close(fd[1]);
    fd[1] = -1;
  }
};

// Reads what is there from `fd` into `into` (up to `max`); false at end of file.
bool ReadSome(int fd, std::string& into, std::size_t max) {
  std::array<char, 8192> buf{};
  ssize_t n = read(fd, buf.data(), buf.size());
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  std::size_t room = into.size() < max ? max - into.size() : 0;
  into.append(buf.data(), std::min(room, static_cast<std::size_t>(n)));
  return true;
}

}  // namespace

Result<CommandOutput> SpawnRunner::Run(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds timeout) {
  if (argv.empty()) return InvalidArgumentError("no program to run");
  Pipe out;
  Pipe err;
  if (pipe2(out.fd.data(), O_CLOEXEC) != 0 || pipe2(err.fd.data(), O_CLOEXEC) != 0) {
    return UnavailableError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  // Its own process group, so the deadline kills whatever it started too;
  // the default signal mask and dispositions (the daemon blocks SIGTERM).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env_.size() + 1);
  for (const std::string& e : env_) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return UnavailableError("cannot run " + argv[0] + ": " + std::strerror(rc));
  out.CloseWrite();
  err.CloseWrite();

  CommandOutput result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool out_open = true;
  bool err_open = true;
  bool timed_out = false;
  while (out_open || err_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{pollfd{out_open ? out.fd[0] : -1, POLLIN, 0},
                              pollfd{err_open ? err.fd[0] : -1, POLLIN, 0}};
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      out_open = ReadSome(out.fd[0], result.out, max_output_);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      err_open = ReadSome(err.fd[0], result.err, max_output_);
    }
  }
  // Both pipes closed: the program is ending, or closed them and lingers
  // (it is then killed at the same deadline).
  int status = 0;
  while (!timed_out) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    usleep(5'000);
  }
  if (timed_out) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) {
    return UnavailableError(argv[0] + " ran past its " + std::to_string(timeout.count()) +
                            " ms deadline and was killed");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace faultline
