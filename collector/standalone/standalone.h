// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

namespace faultline {

// `faultline-agent --standalone [--dry-run] [--demo] [--config FILE]`: the
// agent's pipeline with the tainter's policy in-process instead of Kafka,
// acting on its own node only (collector/README.md, "Standalone"). Called
// by agent_main when `--standalone` is among the flags; `argv` is the whole
// command line. `signals` (SIGINT, SIGTERM, SIGHUP) are blocked in every
// thread and taken here with sigtimedwait.
//
// Exit codes as the agent's: 0 clean stop (the demo: its faults were
// detected and decided), 1 undelivered decisions or a runtime failure (the
// demo: nothing detected in time), 2 bad flags, config, rules or
// Kubernetes credentials.
int RunStandalone(int argc, char** argv, const sigset_t& signals);

}  // namespace faultline
