// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "collector/agent/agent_metrics.h"
#include "matcher/rule_set.h"

namespace faultline {

// Recompiles the rules on demand (SIGHUP) and when a rules path changes, and
// swaps them into the RuleSetHolder only when they compile without errors
// (a reload never makes things worse). A failed reload logs
// every diagnostic, counts a failure and keeps the running set.
//
// Watching: inotify on each rules directory (for a file path, its parent),
// for IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE.
// That catches an editor's save, a `cp`, and a Kubernetes ConfigMap update,
// which swaps the `..data` symlink with a rename. Changes are debounced: the
// reload runs once the directory has been quiet for `debounce`.
//
// Threads: Start() spawns one watcher thread, joined by the destructor.
// Reload() may be called from any thread (it serialises itself).
class RulesWatcher {
 public:
  struct Options {
    RuleSources sources;
    CompileOptions compile;
    std::chrono::milliseconds debounce{500};
  };

  // `holder`, `metrics` and `clock` must outlive the watcher; `clock` times
  // the debounce.
  RulesWatcher(Options options, RuleSetHolder& holder, AgentMetrics& metrics,
               const Clock& clock = RealClock());
  ~RulesWatcher();
  RulesWatcher(const RulesWatcher&) = delete;
  RulesWatcher& operator=(const RulesWatcher&) = delete;

  // Starts watching the directories of the rule paths. kUnavailable: inotify
  // could not be set up (the agent still reloads on SIGHUP). Paths that do
  // not exist yet are skipped with a warning.
  Status Start();

  // Compiles the rules afresh and swaps them in on success. Returns
  // kInvalidArgument (with the count) when the new rules have errors; the
  // running set stays.
  Status Reload(std::string_view reason);

 private:
  void WatchLoop(std::stop_token stop, int inotify_fd);

  const Options options_;
  RuleSetHolder& holder_;
  AgentMetrics& metrics_;
  const Clock& clock_;
  std::mutex reload_mu_;
  int inotify_fd_ = -1;
  std::jthread thread_;
};

}  // namespace faultline
