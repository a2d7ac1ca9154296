// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_reader.h"
#include "base/diagnostics.h"
#include "base/log.h"
#include "base/vocabulary.h"
#include "collector/agent/identity_publisher.h"
#include "collector/agent/kafka_sink.h"
#include "collector/checks/checks_config.h"
#include "collector/sources/file_source.h"
#include "collector/sources/ibcounters_source.h"
#include "collector/sources/journal_source.h"
#include "collector/sources/kmsg_source.h"
#include "collector/sources/podlog_source.h"
#include "matcher/rule_set.h"

namespace faultline {

// One `sources.file` entry: a plain text file read line by line.
struct FileSourceConfig {
  std::string path;
  bool follow = true;  // keep reading as it grows (tail -F); false: read once
  // What rules' `sources:` see these lines as; by default pod, the least
  // trusted (FileSource::Options::origin says why).
  Origin origin = Origin::kPod;
};

// Which daemon the config is for: the Kafka agent requires kafka.brokers;
// the standalone agent ignores `kafka` and has host-aware defaults
// (metrics on 127.0.0.1:9400, the journal when this host keeps one, pod logs
// when /var/log/pods exists).
enum class AgentMode { kKafka, kStandalone };

// Everything `faultline-agent --config FILE` reads. Each field's default is
// the value here, and collector/README.md ("Agent") lists them all;
// DefaultAgentConfigYaml() prints them as a config file.
// One per process, its fields in the config file's order (which readers rely
// on) rather than packed.
// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding)
struct AgentConfig {
  std::string node_name;  // default: $NODE_NAME, else the hostname
  std::string state_dir = "/var/lib/faultline";
  LogLevel log_level = LogLevel::kInfo;
  std::string metrics_address = "0.0.0.0:9400";  // "" turns the endpoint off
  std::chrono::milliseconds shutdown_grace{25'000};
  std::chrono::milliseconds suppression_window{60'000};
  std::uint64_t suppression_max_folded = 100'000;
  // A window's follow-up is also sent early once this many records of its
  // source wait behind its first folded repeat (they cannot commit before
  // it): below max_uncommitted_records, or the reader would stall.
  // 10,000: the cursors held behind a window cost the agent ~2 MiB at 50,000
  // (bench/README.md, "Agent memory", 2026-11-25).
  std::size_t suppression_flush_records = 10'000;
  // Lines of the same source a tainting event carries as evidence (0: none;
  // at most FaultEvent::kMaxEvidenceLines).
  std::size_t evidence_lines = 8;
  // The boot id every event carries (the tainter's evidence that a node
  // rebooted; tainter/README.md "Return to service"). A test points it at a
  // file of its own to play a reboot.
  std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
  std::chrono::milliseconds checkpoint_interval{1000};

  std::size_t max_batch_records = 256;
  std::size_t max_queued_batches = 8;  // bench/README.md "Agent memory": 64 held ~10 MiB in a flood
  std::size_t max_uncommitted_records = 250'000;

  RuleSources rules;  // builtin: true, paths: []
  std::chrono::milliseconds rules_reload_debounce{500};

  bool kmsg_enabled = true;
  KmsgSource::Options kmsg;  // state_dir is filled from state_dir
  bool journal_enabled = false;
  JournalSource::Options journal;
  bool podlog_enabled = false;
  PodLogSource::Options podlog;
  bool ibcounters_enabled = false;
  IbCountersSource::Options ibcounters;
  std::vector<FileSourceConfig> files;
  ChecksConfig checks;  // `checks:` the active checks (collector/checks)

  KafkaSink::Options kafka;  // brokers is required (not in standalone mode)
  // `identity:` the node identity published for fleet correlation (Kafka
  // mode only; brokers and properties come from `kafka`).
  bool identity_enabled = true;
  IdentityPublisher::Options identity;
};

// Top-level sections another layer reads from the same file
// (collector/standalone: `kubernetes` and `standalone`, into the tainter's
// own options): their keys are allowed at the root, and `read` is called
// with the root once it is a mapping.
struct ConfigSections {
  std::vector<std::string_view> keys;
  std::function<void(const ConfigMap& root)> read;
};

// Parses a config file's text through the shared ConfigReader
// (base/config_reader.h). Every problem goes to `diags` as
// "file:line:column: error: message [Cxxx]" (C001 YAML syntax, C002 unknown
// key, C003 invalid value, C004 missing value), all of them in one run.
// nullopt if there was any error. Never throws. Reads $NODE_NAME and the
// hostname only when node_name is not set. An empty text in kStandalone mode
// gives the embedded defaults.
std::optional<AgentConfig> ParseAgentConfig(std::string_view yaml_text, std::string_view file,
                                            Diagnostics& diags, AgentMode mode = AgentMode::kKafka,
                                            const ConfigSections& more = {});

// A complete config file with every key the agent itself reads at its
// default, commented (the standalone sections are printed by
// collector/standalone/standalone_config.h).
std::string DefaultAgentConfigYaml();

}  // namespace faultline
