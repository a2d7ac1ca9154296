// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "base/diagnostics.h"
#include "base/status.h"
#include "collector/agent/agent_config.h"
#include "tainter/apply/node_applier.h"
#include "tainter/kube/kube_settings.h"

namespace faultline {

// `faultline-agent --standalone`: the tainter's policy in the agent, acting
// on its own node (collector/README.md, "Standalone"). The `kubernetes:`
// and `standalone:` sections are read by the tainter's own section readers
// straight into its types, so the defaults and checks (the taint effect,
// the opt-out label) are the tainter's, written once.
struct StandaloneSettings {
  KubernetesSettings kubernetes;
  bool dry_run = false;  // print the patches instead of sending them (also --dry-run)
  Tainter::Options
      tainter;  // node_selector stays empty: the own node is managed unless it opted out
};

// The agent's config with the standalone sections.
struct StandaloneAgentConfig : AgentConfig {
  StandaloneSettings standalone;
};

// The agent's config file, in either mode: the standalone sections are read
// (and checked) in both, used only in standalone. Diagnostics as
// ParseAgentConfig's.
std::optional<StandaloneAgentConfig> ParseStandaloneAgentConfig(std::string_view yaml_text,
                                                                std::string_view file,
                                                                Diagnostics& diags, AgentMode mode);

// Reads and parses the config file at `path` (empty: the embedded defaults,
// standalone only). Problems go to `err` as diagnostics (file:line:col,
// code, source line and caret), or with `json` as one JSON array of
// {file,line,column,level,code,message} (Diagnostics::ToJson; an unreadable
// file is C000); nullopt then.
std::optional<StandaloneAgentConfig> LoadStandaloneAgentConfig(const std::string& path,
                                                               AgentMode mode, std::ostream& err,
                                                               bool json = false);

// A line to add under an error that stopped the agent assembling, for the
// user at the terminal: a /dev/kmsg the agent may not read names the way
// out. Empty for any other error (a state or journal directory refused
// speaks for itself: the kmsg advice would send the user the wrong way).
std::string AssembleErrorHint(const Status& error, const AgentConfig& config);

// The `kubernetes:` and `standalone:` sections at their defaults, commented,
// for `faultline-agent --print-default-config` after DefaultAgentConfigYaml().
std::string DefaultStandaloneConfigYaml();

}  // namespace faultline
