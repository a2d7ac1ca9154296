// SPDX-License-Identifier: Apache-2.0
// ParseAgentConfig on arbitrary YAML, in both modes (a ConfigMap any
// namespace admin may edit). Beyond "no crash": a refusal always comes with
// an error diagnostic and an acceptance never does, and the diagnostics print
// (with source line and caret) for any position yaml-cpp reports.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "collector/agent/agent_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The hostname fallback must not depend on the machine the fuzzer runs on.
  static const bool env_set = [] { return setenv("NODE_NAME", "fuzz-node", 1) == 0; }();
  (void)env_set;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (faultline::AgentMode mode :
       {faultline::AgentMode::kKafka, faultline::AgentMode::kStandalone}) {
    faultline::Diagnostics diags;
    auto config = faultline::ParseAgentConfig(text, "agent.yaml", diags, mode);
    if (config.has_value() == diags.has_errors()) std::abort();
    std::ostringstream out;
    diags.Print(out, {{"agent.yaml", text}});
    (void)diags.ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return 0;
}
