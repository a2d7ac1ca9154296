// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/config_reader.h"
#include "base/diagnostics.h"
#include "base/log.h"
#include "base/status.h"
#include "matcher/rule_set.h"
#include "tainter/apply/applier_config.h"
#include "tainter/apply/node_applier.h"
#include "tainter/correlation/correlation_consumer.h"
#include "tainter/intake/event_consumer.h"
#include "tainter/intake/rule_check.h"
#include "tainter/kube/kube_settings.h"
#include "tainter/remediation/remediation.h"
#include "tainter/slurm/slurm_settings.h"

namespace faultline {

// faultline-tainter's configuration file (YAML). Every key is optional
// except kafka.brokers for the daemon; tainter/README.md lists each with its
// default. Unknown keys are errors, so a typo never silently means "default".
struct TainterConfig {
  KafkaEventConsumer::Options kafka;
  // The rule packs every event is checked against (tainter/intake/rule_check.h):
  // the agents' `rules:` key with the same meaning (built-in packs, then
  // files and directories), so both read one ConfigMap.
  RuleSources rules;
  RuleCheck::OnMismatch on_mismatch = RuleCheck::OnMismatch::kSetAside;
  KubernetesSettings kubernetes;
  // `actuator:` what a decision acts through: "kubernetes" (taints, the
  // default) or "slurm" (drains through scontrol, `slurm:`; tainter/slurm/).
  std::string actuator = "kubernetes";
  SlurmSettings slurm;
  Tainter::Options tainter;
  // The port every faultline daemon serves in a cluster (the manifests'
  // container port, Service and probes); on one host beside an agent, set
  // one of them apart.
  CorrelationSettings correlation;  // `correlation:` (tainter/README.md, "Fleet correlation")
  std::string metrics_address = "0.0.0.0:9400";
  // `remediation:` (tainter/README.md, "Remediation: cordon and drain"):
  // the taint only unless the operator names cordon or drain.
  RemediationOptions remediation;
  LogLevel log_level = LogLevel::kInfo;
  // Nodes per page of a node list (the list's `limit`), not a YAML key: the
  // daemon's 500 (client-go's informer page); the one-shot commands read
  // every node once, in pages of kCommandListPageSize.
  std::size_t list_page_size = 500;
};

// `nodes` and `explain`/`untaint` list the nodes once: 10,000 nodes in 10
// pages fit the client's default burst (10), so the answer does not wait on
// its QPS (5/s) as 20 pages of 500 did (2.1 s in a 10,000-node storm).
inline constexpr std::size_t kCommandListPageSize = 1000;

// Parses the YAML text through the shared ConfigReader: every problem goes
// to `diags` as "FILE:LINE:COL: error: message [Cxxx]" (1-based; the codes
// of base/config_reader.h), all of them in one run. nullopt on any error.
// With `require_brokers` (the daemon), an empty kafka.brokers is C004.
std::optional<TainterConfig> ParseTainterConfig(std::string_view yaml_text,
                                                std::string_view file_name, Diagnostics& diags,
                                                bool require_brokers = false);
// The same as a Result: kInvalidArgument with one diagnostic per line.
Result<TainterConfig> ParseTainterConfig(std::string_view yaml_text, std::string_view file_name);
// Reads and parses `path`. kNotFound: the file cannot be read.
Result<TainterConfig> LoadTainterConfig(const std::string& path);
// Reads and parses `path`, printing every problem to `err` with its source
// line and a caret, or with `json` as one JSON array of
// {file,line,column,level,code,message} (Diagnostics::ToJson, as
// `faultline rules check --format json`). nullopt on any problem.
std::optional<TainterConfig> LoadTainterConfig(const std::string& path, std::ostream& err,
                                               bool require_brokers = false, bool json = false);

// The daemon's own section (the shared ones: tainter/kube/kube_settings.h,
// tainter/apply/applier_config.h):
//   remediation: {action, by_category, by_rule,
//                 drain: {grace_period, max_concurrent, retry_interval, max_retry_interval}}
void ReadRemediationSection(const ConfigMap& parent, RemediationOptions& out);

}  // namespace faultline
