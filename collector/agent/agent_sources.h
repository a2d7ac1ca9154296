// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "collector/agent/agent_config.h"
#include "collector/sources/source.h"
#include "matcher/rule_set.h"

namespace faultline {

// Opens every source the config enables, in a fixed order (kmsg, journal,
// podlog, ibcounters, checks, files). Fails on the first that cannot open, with its
// name in the message: an agent that silently misses a source would report
// a healthy node it cannot see. kFailedPrecondition: the source is not
// available in this build. `rules`, when given, decides which failing check
// findings hold back a check round (a rule with action taint matches them;
// CheckSource::Options::fail_holds_round); it must outlive the sources.
Result<std::vector<std::unique_ptr<Source>>> OpenSources(const AgentConfig& config,
                                                         const Clock& clock,
                                                         const RuleSetHolder* rules = nullptr);

}  // namespace faultline
