// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

namespace faultline {

class AgentMetrics;
class Clock;
class RulesWatcher;

// The agent's main-thread loop, shared by `faultline-agent` and
// `--standalone`: blocks in sigtimedwait until SIGTERM or SIGINT (logged as
// "stopping"); SIGHUP reloads the rules through `watcher` when there is one;
// the counters are logged at info once a minute (of `clock`). `signals` must be
// blocked in every thread (they are, when blocked before any thread starts).
void WaitForStopSignal(const sigset_t& signals, RulesWatcher* watcher, const AgentMetrics& metrics,
                       const Clock& clock);

}  // namespace faultline
