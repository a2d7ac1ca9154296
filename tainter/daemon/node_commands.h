// SPDX-License-Identifier: Apache-2.0
// The operator's commands on nodes, one implementation behind two names:
// `faultline-tainter nodes|untaint|explain` and the kubectl plugin
// `kubectl faultline nodes|untaint|explain` (the kubectl-faultline program).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/diagnostics.h"
#include "base/metrics.h"
#include "base/version.h"
#include "tainter/apply/node_applier.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/kube/kube_node_api.h"

namespace faultline {

// True for the subcommands RunNodeCommand() runs: nodes, untaint, explain.
bool IsNodeCommand(std::string_view arg);

// Runs `args` = {SUBCOMMAND, ARGS...}; `program` names the command in help
// and messages ("faultline-tainter", "kubectl faultline"). No subcommand, or
// -h/--help alone: the overview. Exit status: 0 done (also: untaint of a
// node without faultline's taint, explain of an untainted node), 1 the node
// does not exist or the API server failed, 2 bad usage, config or
// credentials. The caller initialises libcurl.
int RunNodeCommand(std::string_view program, const std::vector<std::string>& args,
                   std::ostream& out, std::ostream& err);

// The libraries the tainter's programs contain, for --version.
std::vector<VersionComponent> TainterVersions();

}  // namespace faultline
