// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collector/checks/check_source.h"
#include "collector/checks/exec_check.h"

namespace faultline {

// A node-problem-detector `custom-plugin-monitor` config, read as NPD reads
// it (k8s.io/node-problem-detector, config/*.json):
//
//   {"plugin": "custom",
//    "pluginConfig": {"invoke_interval": "30s", "timeout": "5s",
//                     "max_output_length": 80, "concurrency": 3},
//    "source": "gpu-custom-plugin-monitor",
//    "conditions": [{"type": "GPUProblem", "reason": "GPUIsHealthy", "message": "..."}],
//    "rules": [{"type": "temporary"|"permanent", "condition": "GPUProblem",
//               "reason": "GPUCountMismatch", "path": "/plugins/check_gpu.sh",
//               "args": ["8"], "timeout": "10s"}]}
//
// Durations are Go's ("1m30s", "500ms"). Defaults as NPD's: invoke_interval
// 30s, timeout 5s, max_output_length 80, concurrency 3. Keys faultline has
// no use for (metricsReporting, skip_initial_status,
// enable_message_change_based_condition_update, a condition's message) are
// accepted and ignored, as NPD ignores unknown keys.
struct NpdPluginConfig {
  std::string source;
  std::chrono::milliseconds invoke_interval{30'000};
  std::size_t concurrency = 3;
  std::vector<ExecCheck::Options> rules;            // name "npd.<source>.<n>.<reason>"
  std::vector<std::chrono::milliseconds> timeouts;  // per rule
};

// Parses the JSON text. kInvalidArgument with "file: what is wrong" for
// malformed JSON, a plugin other than "custom", a rule without a path, a
// type other than temporary/permanent, a permanent rule without condition,
// or a duration that does not parse. Relative rule paths are kept: they are
// resolved against the working directory when run.
Result<NpdPluginConfig> ParseNpdPluginConfig(std::string_view json, std::string_view file,
                                             const std::map<std::string, std::string>& env,
                                             const std::string& working_dir);

// A Go duration ("300ms", "1.5s", "2m", "1h30m"). nullopt if malformed.
std::optional<std::chrono::milliseconds> ParseGoDuration(std::string_view text);

}  // namespace faultline
