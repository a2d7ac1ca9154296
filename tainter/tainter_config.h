// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/log.h"
#include "base/status.h"
#include "tainter/event_consumer.h"
#include "tainter/tainter.h"

namespace faultline {

// faultline-tainter's configuration file (YAML). Every key is optional
// except kafka.brokers for the daemon; tainter/README.md lists each with its
// default. Unknown keys are errors, so a typo never silently means "default".
struct TainterConfig {
  KafkaEventConsumer::Options kafka;
  struct Kubernetes {
    std::string kubeconfig;  // empty: in-cluster service account ($KUBECONFIG for the CLI)
    std::string context;     // empty: the kubeconfig's current-context
    double qps = 5;
    int burst = 10;
    std::chrono::milliseconds request_timeout{10'000};
  } kubernetes;
  Tainter::Options tainter;
  std::string metrics_address = "0.0.0.0:9401";
  LogLevel log_level = LogLevel::kInfo;
};

// Parses the YAML text. Errors are kInvalidArgument with a message of the
// form "FILE:LINE:COL: error: what is wrong and how to fix it" (1-based);
// all problems found are reported, one per line.
Result<TainterConfig> ParseTainterConfig(std::string_view yaml_text, std::string_view file_name);
// Reads and parses `path`. kNotFound: the file cannot be read.
Result<TainterConfig> LoadTainterConfig(const std::string& path);

}  // namespace faultline
