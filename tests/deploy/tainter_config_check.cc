// SPDX-License-Identifier: Apache-2.0
//
// fl-deploy-tainter-config-check: runs the tainter's own config parser over
// config files taken from deploy/'s ConfigMaps (see agent_config_check.cc).
//
//   fl-deploy-tainter-config-check tainter FILE...
//
// Prints every problem as file:line:col; exit 0 when all files parse, 1 when
// any does not, 2 on bad usage.

#include <iostream>
#include <string>

#include "tainter/daemon/tainter_config.h"

int main(int argc, char** argv) {
  const std::string kind = argc > 2 ? argv[1] : "";
  if (kind != "tainter") {
    std::cerr << "usage: fl-deploy-tainter-config-check tainter FILE...\n";
    return 2;
  }
  int failures = 0;
  for (int i = 2; i < argc; ++i) {
    auto config = faultline::LoadTainterConfig(argv[i]);
    if (!config.ok()) {
      std::cerr << config.error().message() << "\n";
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
