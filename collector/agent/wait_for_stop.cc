// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/wait_for_stop.h"

#include <chrono>
#include <ctime>

#include "base/clock.h"
#include "base/log.h"
#include "collector/agent/agent_metrics.h"
#include "collector/agent/rules_watcher.h"

namespace faultline {

void WaitForStopSignal(const sigset_t& signals, RulesWatcher* watcher, const AgentMetrics& metrics,
                       const Clock& clock) {
  auto next_summary = clock.MonotonicNow() + std::chrono::minutes(1);
  for (;;) {
    // A one-second tick rather than sigwait, so the counters get logged on a
    // quiet node too.
    const timespec tick{1, 0};
    const int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGHUP && watcher != nullptr) {
      watcher->Reload("SIGHUP").IgnoreError();
    } else if (sig == SIGTERM || sig == SIGINT) {
      LogInfo("agent", "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      return;
    }
    if (clock.MonotonicNow() >= next_summary) {
      next_summary += std::chrono::minutes(1);
      LogInfo("agent", "counters", metrics.Summary());
    }
  }
}

}  // namespace faultline
