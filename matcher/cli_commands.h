// SPDX-License-Identifier: Apache-2.0
// The `faultline` subcommands. Each takes the arguments after its name and
// returns the process exit status; output goes to `out`, problems to `err`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace faultline {

// faultline scan ...: 0 (also when faults are found, unless --fail-on),
// 1 with --fail-on and a matching event, 2 bad usage, invalid rules or an
// unreadable input.
int RunScanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// faultline rules check|list ...: check: 0 ok, 1 embedded tests failed,
// 2 invalid packs (or warnings with --werror) or bad usage.
int RunRulesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace faultline
