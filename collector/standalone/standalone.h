// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

#include "collector/agent/agent_flags.h"

namespace faultline {

// `faultline-agent --standalone [--dry-run] [--demo] [--config FILE]`: the
// agent's pipeline with the tainter's policy in-process instead of Kafka,
// acting on its own node only (collector/README.md, "Standalone"). Called
// by agent_main when `--standalone` is among the flags, with the flags
// ParseAgentFlags read (action kRun). `signals` (SIGINT, SIGTERM, SIGHUP) are blocked in every
// thread and taken here with sigtimedwait.
//
// Exit codes as the agent's: 0 clean stop (the demo: its faults were
// detected and decided), 1 undelivered decisions or a runtime failure (the
// demo: nothing detected in time), 2 bad flags, config, rules or
// Kubernetes credentials.
int RunStandalone(const AgentFlags& flags, const sigset_t& signals);

}  // namespace faultline
