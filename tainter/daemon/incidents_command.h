// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace faultline {

// `faultline-tainter incidents --config FILE [--since 1h] [--kubeconfig PATH]`:
// the incidents of the last `--since`, one block per incident (time, job,
// nodes, attributed node, evidence), rebuilt from Kafka the way a replica
// rebuilds them (every partition of the events and identity topics; Node
// addresses from the API server when it answers). Exit status: 0 done, 1
// Kafka could not be read, 2 bad usage or config.
int RunIncidentsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace faultline
