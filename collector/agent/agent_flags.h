// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

namespace faultline {

// faultline-agent's command line, both modes (Kafka and `--standalone`) in
// one description (agent_flags.cc) read by one parser, so a flag means the
// same in both and each mode refuses the other's flags the same way.
struct AgentFlags {
  enum class Action {
    kRun,                 // run the agent (or standalone) with the flags below
    kPrintVersion,        // --version anywhere on the line wins over everything else
    kPrintHelp,           // -h/--help: the mode's usage and help to stdout, exit 0
    kPrintDefaultConfig,  // --print-default-config (Kafka mode only)
    kBadUsage,            // `error` to stderr, exit 2
  };
  Action action = Action::kRun;
  bool standalone = false;  // --standalone anywhere on the line
  std::string config_path;  // --config FILE or --config=FILE; the last one wins
  bool dry_run = false;     // --dry-run (standalone only)
  bool demo = false;        // --demo (standalone only)
  bool json = false;        // --format json: config problems as one JSON array
  bool check_once = false;  // --check-once: the active checks once, NHC-style (check_once.h)
  std::string error;        // kBadUsage: the complete text for stderr (usage included)
};

// Reads argv[1..argc) in order: the first help, print-default-config or
// unknown flag decides; a flag of the other mode is unknown.
AgentFlags ParseAgentFlags(int argc, const char* const* argv);

// The usage lines and the help for the mode (`--help` prints both).
std::string_view AgentUsage(bool standalone);
std::string_view AgentHelp(bool standalone);

}  // namespace faultline
