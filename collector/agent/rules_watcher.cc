// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/rules_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "base/log.h"
#include "collector/sources/wakeup.h"

namespace faultline {

RulesWatcher::RulesWatcher(Options options, RuleSetHolder& holder, AgentMetrics& metrics,
                           const Clock& clock)
    : options_(std::move(options)), holder_(holder), metrics_(metrics), clock_(clock) {}

RulesWatcher::~RulesWatcher() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
}

Status RulesWatcher::Reload(std::string_view reason) {
  std::lock_guard lock(reload_mu_);
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> rules =
      LoadRules(options_.sources, options_.compile, diags, texts);
  if (!rules) {
    metrics_.reloads_failed.Inc();
    // Every diagnostic, compiler-style, so the operator sees all problems.
    std::ostringstream text;
    diags.Print(text, texts);
    LogError("rules", "reload failed; the running rules stay in force",
             {{"reason", reason},
              {"errors", diags.error_count()},
              {"diagnostics", diags.ToJson()},
              {"text", text.str()}});
    return InvalidArgumentError(std::to_string(diags.error_count()) + " error(s) in the rules");
  }
  holder_.Replace(rules);
  metrics_.reloads_ok.Inc();
  metrics_.rules_loaded.Set(static_cast<double>(rules->size()));
  LogInfo("rules", "rules reloaded",
          {{"reason", reason}, {"rules", rules->size()}, {"warnings", diags.warning_count()}});
  return OkStatus();
}

Status RulesWatcher::Start() {
  if (options_.sources.paths.empty()) return OkStatus();
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) return UnavailableError(std::string("inotify_init1: ") + strerror(errno));
  std::set<std::string> dirs;
  for (const std::string& path : options_.sources.paths) {
    std::error_code ec;
    const std::filesystem::path p(path);
    std::filesystem::path dir = std::filesystem::is_directory(p, ec) ? p : p.parent_path();
    if (dir.empty()) dir = ".";
    dirs.insert(dir.string());
  }
  constexpr std::uint32_t kMask =
      IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_ONLYDIR;
  for (const std::string& dir : dirs) {
    if (::inotify_add_watch(inotify_fd_, dir.c_str(), kMask) < 0) {
      LogWarning("rules", "cannot watch a rules directory; SIGHUP still reloads",
                 {{"directory", dir}, {"error", strerror(errno)}});
    }
  }
  thread_ = std::jthread([this](std::stop_token stop) { WatchLoop(stop, inotify_fd_); });
  return OkStatus();
}

void RulesWatcher::WatchLoop(std::stop_token stop, int inotify_fd) {
  StopWakeup wakeup;
  if (!wakeup.status().ok()) {
    LogError("rules", "rules watcher not started", {{"error", wakeup.status().ToString()}});
    return;
  }
  bool pending = false;
  auto due = clock_.MonotonicNow();
  alignas(struct inotify_event) char buffer[16 * 1024];
  while (!stop.stop_requested()) {
    auto timeout = std::chrono::milliseconds(-1);
    if (pending) {
      timeout = std::max(
          std::chrono::milliseconds(0),
          std::chrono::duration_cast<std::chrono::milliseconds>(due - clock_.MonotonicNow()));
    }
    Result<WaitOutcome> w = WaitReadable(inotify_fd, wakeup, stop, timeout);
    if (!w.ok()) {
      LogError("rules", "rules watcher stopped", {{"error", w.error().ToString()}});
      return;
    }
    if (*w == WaitOutcome::kStopped) return;
    if (*w == WaitOutcome::kReady) {
      // Drain every queued event; their details do not matter, only that
      // something changed (the debounce restarts).
      while (::read(inotify_fd, buffer, sizeof(buffer)) > 0) {
      }
      pending = true;
      due = clock_.MonotonicNow() + options_.debounce;
      continue;
    }
    if (pending && clock_.MonotonicNow() >= due) {
      pending = false;
      Reload("rules directory changed").IgnoreError();
    }
  }
}

}  // namespace faultline
