// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "base/fault_event.h"
#include "base/time_format.h"

namespace faultline {
namespace {

std::string DefaultNodeName() {
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;  // NOLINT
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "";
}

// One of `names` (the spelling in the file) to its value, or a C003 error.
template <typename T>
void Choice(const ConfigMap& m, std::string_view key,
            std::initializer_list<std::pair<std::string_view, T>> names, T& out) {
  if (!m.Get(key).IsDefined()) return;
  std::string value;
  m.String(key, value);
  std::string list;
  for (const auto& [name, v] : names) {
    if (name == value) {
      out = v;
      return;
    }
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  m.Error(key, "C003", "'" + m.PathOf(key) + "' must be one of " + list + ", not '" + value + "'");
}

void ReadSources(const ConfigMap& sources, AgentConfig& c) {
  if (auto n = sources.Sub("kmsg", {"enabled", "path", "start"})) {
    n->Bool("enabled", c.kmsg_enabled);
    n->String("path", c.kmsg.device_path);
    Choice<KmsgSource::StartPolicy>(n.value(), "start",
                                    {{"whole_ring", KmsgSource::StartPolicy::kWholeRing},
                                     {"end", KmsgSource::StartPolicy::kEnd}},
                                    c.kmsg.start_policy);
  }
  if (auto n = sources.Sub(
          "journal", {"enabled", "directory", "units", "identifiers", "transports", "start"})) {
    n->Bool("enabled", c.journal_enabled);
    n->String("directory", c.journal.directory);
    n->StringList("units", c.journal.units);
    n->StringList("identifiers", c.journal.identifiers);
    n->StringList("transports", c.journal.transports);
    Choice<JournalSource::Start>(n.value(), "start",
                                 {{"head", JournalSource::Start::kHead},
                                  {"current_boot", JournalSource::Start::kCurrentBoot},
                                  {"tail", JournalSource::Start::kTail}},
                                 c.journal.start);
  }
  if (auto n = sources.Sub("podlog", {"enabled", "root", "include_namespaces", "exclude_namespaces",
                                      "rescan_interval", "read_interval", "max_line_bytes"})) {
    n->Bool("enabled", c.podlog_enabled);
    n->String("root", c.podlog.root);
    n->StringList("include_namespaces", c.podlog.include_namespaces);
    n->StringList("exclude_namespaces", c.podlog.exclude_namespaces);
    n->Duration("rescan_interval", c.podlog.rescan_interval, true);
    n->Duration("read_interval", c.podlog.read_interval, true);
    n->Number("max_line_bytes", c.podlog.max_line_bytes, std::size_t{1024});
  }
  if (auto n = sources.Sub("ibcounters", {"enabled", "sysfs_root", "interval"})) {
    n->Bool("enabled", c.ibcounters_enabled);
    n->String("sysfs_root", c.ibcounters.sysfs_root);
    n->Duration("interval", c.ibcounters.interval, true);
  }
  if (YAML::Node n = sources.Get("file"); n.IsDefined()) {
    if (!n.IsSequence()) {
      sources.Error("file", "C003", "'sources.file' must be a list of {path, follow, origin}");
      return;
    }
    for (const YAML::Node& item : n) {
      ConfigMap entry(sources.reader(), item, "sources.file[]", {"path", "follow", "origin"});
      if (!entry.valid()) continue;
      FileSourceConfig f;
      entry.String("path", f.path);
      entry.Bool("follow", f.follow);
      std::string origin;
      entry.String("origin", origin);
      if (!origin.empty()) {
        if (auto o = ParseOrigin(origin); o && *o != Origin::kCheck) {
          f.origin = *o;
        } else {
          entry.Error("origin", "C003",
                      "'sources.file[].origin' must be kernel, journal, pod, ibcounters or any "
                      "(only the checks make check records), "
                      "not '" +
                          origin + "'");
        }
      }
      if (f.path.empty()) {
        sources.reader().Error(item, "C004", "sources.file entry needs a path");
      }
      c.files.push_back(std::move(f));
    }
  }
}

void ReadKafka(const ConfigMap& kafka, AgentConfig& c) {
  kafka.String("brokers", c.kafka.brokers);
  kafka.String("topic", c.kafka.topic);
  kafka.Duration("message_timeout", c.kafka.message_timeout, true);
  kafka.Number("queue_max_messages", c.kafka.queue_max_messages, 1);
  kafka.String("compression", c.kafka.compression);
  kafka.Duration("linger", c.kafka.linger, true);
  kafka.StringMap("properties", c.kafka.properties);
  static constexpr std::string_view kCodecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
  bool codec_ok = false;
  for (std::string_view codec : kCodecs) codec_ok = codec_ok || codec == c.kafka.compression;
  if (!codec_ok) {
    kafka.Error("compression", "C003",
                "'kafka.compression' must be none, gzip, snappy, lz4 or zstd, not '" +
                    c.kafka.compression + "'");
  }
}

void ReadRoot(const ConfigMap& root, AgentMode mode, AgentConfig& c) {
  root.String("node_name", c.node_name);
  root.String("state_dir", c.state_dir);
  std::string level = "info";
  root.String("log_level", level);
  if (!ParseLogLevel(level, &c.log_level)) {
    root.Error("log_level", "C003",
               "'log_level' must be debug, info, warn or error, not '" + level + "'");
  }
  root.String("metrics_address", c.metrics_address);
  root.Duration("shutdown_grace", c.shutdown_grace, true);
  root.Duration("suppression_window", c.suppression_window, true);
  root.Number("suppression_max_folded", c.suppression_max_folded, std::uint64_t{1});
  root.Number("suppression_flush_records", c.suppression_flush_records, std::size_t{1});
  root.Number("evidence_lines", c.evidence_lines, std::size_t{0});
  root.String("boot_id_path", c.boot_id_path);
  if (c.evidence_lines > FaultEvent::kMaxEvidenceLines) {
    root.Error("evidence_lines", "C003",
               "'evidence_lines' must be at most " + std::to_string(FaultEvent::kMaxEvidenceLines) +
                   ", not " + std::to_string(c.evidence_lines));
  }
  root.Duration("checkpoint_interval", c.checkpoint_interval, true);
  if (auto q = root.Sub("queue",
                        {"max_batch_records", "max_queued_batches", "max_uncommitted_records"})) {
    q->Number("max_batch_records", c.max_batch_records, std::size_t{1});
    q->Number("max_queued_batches", c.max_queued_batches, std::size_t{1});
    q->Number("max_uncommitted_records", c.max_uncommitted_records, std::size_t{1});
  }
  if (auto rules = root.Sub("rules", {"builtin", "paths", "reload_debounce"})) {
    rules->Bool("builtin", c.rules.builtin);
    rules->StringList("paths", c.rules.paths);
    rules->Duration("reload_debounce", c.rules_reload_debounce, true);
  }
  if (auto s = root.Sub("sources", {"kmsg", "journal", "podlog", "ibcounters", "file"})) {
    ReadSources(*s, c);
  }
  if (auto k = root.Sub("kafka", {"brokers", "topic", "properties", "message_timeout",
                                  "queue_max_messages", "compression", "linger"})) {
    ReadKafka(*k, c);
  }
  if (auto checks = root.Sub("checks", ChecksConfigKeys())) {
    ReadChecksConfig(*checks, c.checks);
  }
  if (auto id = root.Sub("identity", {"enabled", "topic", "interval", "sysfs_root"})) {
    id->Bool("enabled", c.identity_enabled);
    id->String("topic", c.identity.topic);
    id->Duration("interval", c.identity.interval, false);
    id->String("sysfs_root", c.identity.sysfs_root);
  }
  if (mode == AgentMode::kKafka && c.kafka.brokers.empty()) {
    root.reader().Error(root.node(), "C004",
                        "kafka.brokers is required (bootstrap servers, host:port,...)");
  }
  if (c.suppression_max_folded >= c.max_uncommitted_records) {
    root.reader().Error(root.node(), "C003",
                        "suppression_max_folded (" + std::to_string(c.suppression_max_folded) +
                            ") must be below queue.max_uncommitted_records (" +
                            std::to_string(c.max_uncommitted_records) +
                            "), or a flood could stall its source");
  }
  // Unset, it follows a smaller queue.max_uncommitted_records down (half of
  // it), so a config written before the key existed still loads.
  if (!root.node()["suppression_flush_records"] &&
      c.suppression_flush_records >= c.max_uncommitted_records) {
    c.suppression_flush_records = std::max<std::size_t>(1, c.max_uncommitted_records / 2);
  }
  if (c.suppression_flush_records >= c.max_uncommitted_records) {
    root.reader().Error(root.node(), "C003",
                        "suppression_flush_records (" +
                            std::to_string(c.suppression_flush_records) +
                            ") must be below queue.max_uncommitted_records (" +
                            std::to_string(c.max_uncommitted_records) +
                            "), or an open suppression window could stall its source");
  }
  if (c.checkpoint_interval.count() <= 0) {
    root.Error("checkpoint_interval", "C003", "checkpoint_interval must be above 0s");
  }
}

}  // namespace

std::optional<AgentConfig> ParseAgentConfig(std::string_view yaml_text, std::string_view file,
                                            Diagnostics& diags, AgentMode mode,
                                            const ConfigSections& more) {
  const std::size_t errors_before = diags.error_count();
  ConfigReader reader(std::string(file), diags);
  AgentConfig c;
  if (mode == AgentMode::kStandalone) {
    // One server, no DaemonSet: keep the endpoint local and read what this
    // host has. A config file still overrides each of these.
    std::error_code ec;
    c.metrics_address = "127.0.0.1:9400";
    c.journal_enabled = std::filesystem::is_directory("/var/log/journal", ec) ||
                        std::filesystem::is_directory("/run/log/journal", ec);
    c.podlog_enabled = std::filesystem::is_directory(c.podlog.root, ec);
  }
  std::optional<YAML::Node> root = reader.Load(yaml_text);
  if (!root) return std::nullopt;
  try {
    std::vector<std::string_view> keys = {"node_name",
                                          "state_dir",
                                          "log_level",
                                          "metrics_address",
                                          "shutdown_grace",
                                          "suppression_window",
                                          "suppression_max_folded",
                                          "suppression_flush_records",
                                          "evidence_lines",
                                          "boot_id_path",
                                          "checkpoint_interval",
                                          "queue",
                                          "rules",
                                          "sources",
                                          "kafka",
                                          "identity",
                                          "checks"};
    keys.insert(keys.end(), more.keys.begin(), more.keys.end());
    ConfigMap map(reader, *root, "", keys);
    if (map.valid()) {
      ReadRoot(map, mode, c);
      if (more.read) more.read(map);
    }
  } catch (const YAML::Exception& e) {
    diags.Error("C001", {std::string(file), e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
  if (diags.error_count() != errors_before) return std::nullopt;
  if (c.node_name.empty()) c.node_name = DefaultNodeName();
  if (c.node_name.empty()) {
    diags.Error("C004", {std::string(file), 0, 0},
                "node_name is not set, $NODE_NAME is empty and the hostname is unknown");
    return std::nullopt;
  }
  c.kmsg.state_dir = c.state_dir;
  c.journal.state_dir = c.state_dir;
  c.podlog.state_dir = c.state_dir;
  c.ibcounters.state_dir = c.state_dir;
  c.journal.skip_kernel_transport = c.kmsg_enabled;
  return c;
}

std::string DefaultAgentConfigYaml() {
  return R"yaml(# faultline-agent configuration; every key is shown at its default.
node_name: ""               # "" = $NODE_NAME, else the hostname; also the Kafka message key
state_dir: /var/lib/faultline   # checkpoints, one file per source
log_level: info             # debug | info | warn | error
metrics_address: 0.0.0.0:9400   # /metrics, /healthz, /readyz; "" = off
shutdown_grace: 25s         # stop → drain → flush deadline; keep below terminationGracePeriodSeconds
suppression_window: 60s     # repeats of (rule, captures) within it fold into one follow-up; 0s = off
suppression_max_folded: 100000  # a follow-up is sent early after this many repeats
suppression_flush_records: 10000  # ... or after this many later lines of its source wait behind it
checkpoint_interval: 1s     # how often committed positions are written to state_dir
queue:
  max_batch_records: 256    # records per Read()
  max_queued_batches: 8     # batches between readers and the match thread (backpressure)
  max_uncommitted_records: 250000  # per source, read but not yet delivered, before it waits
rules:
  builtin: true             # the packs compiled into the binary
  paths: []                 # files or directories of *.yaml packs, read in order; watched for changes
  reload_debounce: 500ms    # quiet time after a change in a rules directory before reloading
sources:
  kmsg:
    enabled: true
    path: /dev/kmsg
    start: whole_ring       # whole_ring | end (only without a checkpoint)
  journal:
    enabled: false
    directory: ""           # "" = the local journal
    units: []
    identifiers: []
    transports: []
    start: current_boot     # head | current_boot | tail (only without a checkpoint)
  podlog:
    enabled: false
    root: /var/log/pods
    include_namespaces: []  # [] = all
    exclude_namespaces: []
    rescan_interval: 2s
    read_interval: 250ms
    max_line_bytes: 262144
  ibcounters:
    enabled: false
    sysfs_root: /sys            # reads <root>/class/infiniband/*/ports/*
    interval: 10s
  file: []                  # - {path: /var/log/x.log, follow: true, origin: pod}  (origin: kernel|journal|pod|ibcounters|any; default pod, the least trusted)
kafka:
  brokers: ""               # required: bootstrap servers, host:port,host:port
  topic: faultline.events
  message_timeout: 0s       # 0s = retry until delivered (an outage buffers, then backpressures)
  queue_max_messages: 100000  # librdkafka queue.buffering.max.messages
  compression: lz4          # none | gzip | snappy | lz4 | zstd
  linger: 5ms
  properties: {}            # any librdkafka property, e.g. security.protocol: SASL_SSL
checks:                     # active checks: results are records of origin `check` (README "Active checks")
  enabled: true
  concurrency: 2            # checks running at once (a hung one gives its slot back)
  jitter: 5s                # each run starts up to this much late (at most half its interval)
  repeat: 5m                # an unchanged failure is sent again this often; keep above suppression_window
  sysfs_root: /sys
  gpu_inventory:            # accelerators on the PCI bus by vendor and class; no library needed
    enabled: true
    interval: 60s
    timeout: 10s
    expected: {}            # e.g. {nvidia: 8}; unset: the most seen since the agent started
  pcie:                     # link width (accelerators, NICs) and speed (NICs) below their maximum
    enabled: true
    interval: 5m
    timeout: 10s
  aer:                      # PCIe AER fatal/non-fatal counters growing since the agent started
    enabled: true
    interval: 60s
    timeout: 10s
  procfs_root: /proc
  nvidia_driver:            # NVIDIA GPUs on the bus but no driver, or not in /proc/driver/nvidia/gpus
    enabled: true
    interval: 60s
    timeout: 10s
  nvml:                     # NVIDIA through libnvidia-ml, dlopen'ed; absent: logged once, skipped
    enabled: true
    library: libnvidia-ml.so.1
    interval: 60s
    timeout: 10s
    # expected: 8           # GPUs NVML must see; unset: the most seen since the agent started
    ecc_aggregate_max: 0    # lifetime uncorrectable ECC errors above this fail
  env: {}                   # the whole environment of exec and NPD checks; {} = PATH only
  working_dir: /            # their working directory; relative plugin paths resolve here
  exec: []                  # - {name: nhc, path: /usr/sbin/nhc, args: [], interval: 5m, timeout: 30s, max_output_length: 80}
  npd:
    configs: []             # node-problem-detector custom-plugin-monitor JSON files, as they are
identity:                   # this node's addresses and IB GIDs, for the tainter's fleet correlation
  enabled: true
  topic: faultline.identity # compacted, key = node
  interval: 5m
  sysfs_root: /sys          # reads <root>/class/infiniband/*/ports/*/gids/*
)yaml";
}

}  // namespace faultline
