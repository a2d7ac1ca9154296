// SPDX-License-Identifier: Apache-2.0
//
// fl-deploy-agent-config-check: runs the agent's own config parser over
// config files taken from deploy/'s ConfigMaps, so a key the manifests
// misspell or a value the agent rejects fails tests/deploy/render_test.py
// rather than the first pod. faultline-agent has no --check-config flag; this
// calls the parse function its main() calls first (the agent's keys and the
// standalone sections, read in both modes). (The tainter's parser is
// in tainter_config_check.cc: matcher/rule.h's struct Outcome and
// tainter/core/policy.h's enum Outcome cannot share a translation unit.)
//
//   fl-deploy-agent-config-check agent FILE...        (the Kafka agent's config)
//   fl-deploy-agent-config-check standalone FILE...   (--standalone's: no kafka)
//
// Prints every diagnostic as file:line:col; exit 0 when all files parse,
// 1 when any does not, 2 on bad usage.

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "base/diagnostics.h"
#include "collector/standalone/standalone_config.h"

namespace {

int CheckAgentConfigs(int argc, char** argv, faultline::AgentMode mode) {
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << argv[i] << ": error: cannot read the file\n";
      ++failures;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    faultline::Diagnostics diags;
    if (!faultline::ParseStandaloneAgentConfig(text.str(), argv[i], diags, mode)) {
      diags.Print(std::cerr, {{argv[i], text.str()}});
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc > 2 ? argv[1] : "";
  if (kind == "agent") return CheckAgentConfigs(argc, argv, faultline::AgentMode::kKafka);
  if (kind == "standalone") return CheckAgentConfigs(argc, argv, faultline::AgentMode::kStandalone);
  std::cerr << "usage: fl-deploy-agent-config-check agent|standalone FILE...\n";
  return 2;
}
