// SPDX-License-Identifier: Apache-2.0
// Runs faultline-agent as a child process for the standalone tests: stdout
// and stderr go to files in a TempDir, waits are bounded.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace faultline {

inline std::string AgentBinary() {
  return std::string(FL_BINARY_DIR) + "/collector/faultline-agent";
}

class AgentProcess {
 public:
  // Starts `AgentBinary() args...` with `env` added to (or replacing in)
  // the environment; KUBERNETES_SERVICE_HOST is always removed so the test
  // machine's own cluster (if any) is never found.
  AgentProcess(const TempDir& dir, const std::string& name, std::vector<std::string> args,
               const std::map<std::string, std::string>& env)
      : out_path_(dir / (name + ".stdout")), err_path_(dir / (name + ".stderr")) {
    pid_ = ::fork();
    if (pid_ == 0) {
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      ::unsetenv("KUBERNETES_SERVICE_HOST");
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      FILE* out = std::freopen(out_path_.c_str(), "w", stdout);
      FILE* err = std::freopen(err_path_.c_str(), "w", stderr);
      if (out == nullptr || err == nullptr) ::_exit(127);
      std::vector<std::string> all = {AgentBinary()};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      argv.reserve(all.size() + 1);
      for (std::string& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~AgentProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  std::string out() const { return ReadFileForTest(out_path_); }
  std::string err() const { return ReadFileForTest(err_path_); }

  // Polls until `done()` or the child exits or `timeout` passes.
  bool WaitFor(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (done()) return true;
      if (Exited() || std::chrono::steady_clock::now() >= deadline) return done();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  bool WaitForOutput(const std::string& text,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return WaitFor([&] { return out().find(text) != std::string::npos; }, timeout);
  }

  // SIGTERM, then the exit code (-1: did not exit within `timeout`, then killed).
  int Stop(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    if (!exited_) ::kill(pid_, SIGTERM);
    return Wait(timeout);
  }
  int Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!Exited()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        exited_ = true;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return code_;
  }

 private:
  bool Exited() {
    if (exited_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return exited_;
  }

  std::string out_path_;
  std::string err_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

inline void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << line << '\n';
}

inline int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + what.size())) {
    ++n;
  }
  return n;
}

}  // namespace faultline
