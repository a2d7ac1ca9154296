// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

#include "base/config_reader.h"

namespace faultline {

// The `kubernetes:` section both faultline-tainter and
// `faultline-agent --standalone` read: which credentials, and how hard to
// press the API server.
struct KubernetesSettings {
  std::string kubeconfig;  // empty: the lookup order of tainter/kube/kube_config.h
  std::string context;     // empty: the kubeconfig's current-context
  double qps = 5;
  int burst = 10;
  std::chrono::milliseconds request_timeout{10'000};
};

// Reads `kubernetes: {kubeconfig, context, qps, burst, request_timeout}`
// from the mapping that holds it (the root of the tainter's file, the
// agent's root in standalone), reporting through the shared ConfigReader.
void ReadKubernetesSection(const ConfigMap& parent, KubernetesSettings& out);

}  // namespace faultline
