// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>

#include <yaml-cpp/yaml.h>

#include "base/time_format.h"

namespace faultline {
namespace {

// Walks the YAML tree, reporting every problem at its 1-based location and
// carrying on, so one run shows them all. yaml-cpp's exceptions stop here.
class ConfigReader {
 public:
  ConfigReader(std::string file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  SourceLocation At(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {file_, 0, 0};
    return {file_, mark.line + 1, mark.column + 1};
  }

  void Error(const YAML::Node& node, std::string code, std::string message) {
    diags_.Error(std::move(code), At(node), std::move(message));
  }

  // True if `node` is a mapping whose keys are all in `allowed`; unknown
  // keys are reported (a typo must not silently become a default).
  bool Map(const YAML::Node& node, std::string_view what,
           std::initializer_list<std::string_view> allowed) {
    if (!node.IsMap()) {
      Error(node, "C003", std::string(what) + " must be a mapping");
      return false;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      bool known = false;
      for (std::string_view a : allowed) known = known || a == key;
      if (!known) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        Error(it->first, "C002",
              "unknown key '" + key + "' in " + std::string(what) + " (known: " + list + ")");
      }
    }
    return true;
  }

  static const YAML::Node Get(const YAML::Node& map, std::string_view key) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (it->first.Scalar() == key && !it->second.IsNull()) return it->second;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }

  bool Scalar(const YAML::Node& node, std::string_view key) {
    if (node.IsScalar()) return true;
    Error(node, "C003", std::string(key) + " must be a single value");
    return false;
  }

  void String(const YAML::Node& map, std::string_view key, std::string& out) {
    const YAML::Node n = Get(map, key);
    if (n.IsDefined() && Scalar(n, key)) out = n.Scalar();
  }

  void Bool(const YAML::Node& map, std::string_view key, bool& out) {
    const YAML::Node n = Get(map, key);
    if (!n.IsDefined() || !Scalar(n, key)) return;
    const std::string& v = n.Scalar();
    if (v == "true" || v == "yes" || v == "on") {
      out = true;
    } else if (v == "false" || v == "no" || v == "off") {
      out = false;
    } else {
      Error(n, "C003", std::string(key) + ": '" + v + "' is not true or false");
    }
  }

  void Duration(const YAML::Node& map, std::string_view key, std::chrono::milliseconds& out) {
    const YAML::Node n = Get(map, key);
    if (!n.IsDefined() || !Scalar(n, key)) return;
    if (auto d = ParseDuration(n.Scalar())) {
      out = *d;
    } else {
      Error(n, "C003",
            std::string(key) + ": '" + n.Scalar() +
                "' is not a duration (write e.g. 500ms, 30s, 5m, 1h; 0s where allowed)");
    }
  }

  template <typename Int>
  void Number(const YAML::Node& map, std::string_view key, Int& out, Int min) {
    const YAML::Node n = Get(map, key);
    if (!n.IsDefined() || !Scalar(n, key)) return;
    const std::string& v = n.Scalar();
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || parsed < static_cast<long long>(min)) {
      Error(n, "C003",
            std::string(key) + ": '" + v + "' is not a whole number >= " + std::to_string(min));
      return;
    }
    out = static_cast<Int>(parsed);
  }

  void StringList(const YAML::Node& map, std::string_view key, std::vector<std::string>& out) {
    const YAML::Node n = Get(map, key);
    if (!n.IsDefined()) return;
    if (!n.IsSequence()) {
      Error(n, "C003", std::string(key) + " must be a list");
      return;
    }
    out.clear();
    for (const YAML::Node& item : n) {
      if (Scalar(item, key)) out.push_back(item.Scalar());
    }
  }

  void OriginValue(const YAML::Node& map, std::string_view key, Origin& out) {
    const YAML::Node n = Get(map, key);
    if (!n.IsDefined() || !Scalar(n, key)) return;
    if (auto o = ParseOrigin(n.Scalar())) {
      out = *o;
    } else {
      Error(n, "C003",
            std::string(key) + ": '" + n.Scalar() +
                "' is not an origin (kernel, journal, pod, ibcounters, any)");
    }
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  Diagnostics& diags_;
};

std::string DefaultNodeName() {
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;  // NOLINT
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "";
}

void ReadSources(ConfigReader& r, const YAML::Node& sources, AgentConfig& c) {
  if (!r.Map(sources, "sources", {"kmsg", "journal", "podlog", "ibcounters", "file"})) return;
  if (YAML::Node n = ConfigReader::Get(sources, "kmsg"); n.IsDefined()) {
    if (r.Map(n, "sources.kmsg", {"enabled", "path", "start"})) {
      r.Bool(n, "enabled", c.kmsg_enabled);
      r.String(n, "path", c.kmsg.device_path);
      std::string start = "whole_ring";
      r.String(n, "start", start);
      if (start == "whole_ring") {
        c.kmsg.start_policy = KmsgSource::StartPolicy::kWholeRing;
      } else if (start == "end") {
        c.kmsg.start_policy = KmsgSource::StartPolicy::kEnd;
      } else {
        r.Error(ConfigReader::Get(n, "start"), "C003",
                "sources.kmsg.start: '" + start + "' is not whole_ring or end");
      }
    }
  }
  if (YAML::Node n = ConfigReader::Get(sources, "journal"); n.IsDefined()) {
    if (r.Map(n, "sources.journal",
              {"enabled", "directory", "units", "identifiers", "transports", "start"})) {
      r.Bool(n, "enabled", c.journal_enabled);
      r.String(n, "directory", c.journal.directory);
      r.StringList(n, "units", c.journal.units);
      r.StringList(n, "identifiers", c.journal.identifiers);
      r.StringList(n, "transports", c.journal.transports);
      std::string start = "current_boot";
      r.String(n, "start", start);
      if (start == "head") {
        c.journal.start = JournalSource::Start::kHead;
      } else if (start == "current_boot") {
        c.journal.start = JournalSource::Start::kCurrentBoot;
      } else if (start == "tail") {
        c.journal.start = JournalSource::Start::kTail;
      } else {
        r.Error(ConfigReader::Get(n, "start"), "C003",
                "sources.journal.start: '" + start + "' is not head, current_boot or tail");
      }
    }
  }
  if (YAML::Node n = ConfigReader::Get(sources, "podlog"); n.IsDefined()) {
    if (r.Map(n, "sources.podlog",
              {"enabled", "root", "include_namespaces", "exclude_namespaces", "rescan_interval",
               "read_interval", "max_line_bytes"})) {
      r.Bool(n, "enabled", c.podlog_enabled);
      r.String(n, "root", c.podlog.root);
      r.StringList(n, "include_namespaces", c.podlog.include_namespaces);
      r.StringList(n, "exclude_namespaces", c.podlog.exclude_namespaces);
      r.Duration(n, "rescan_interval", c.podlog.rescan_interval);
      r.Duration(n, "read_interval", c.podlog.read_interval);
      r.Number(n, "max_line_bytes", c.podlog.max_line_bytes, std::size_t{1024});
    }
  }
  if (YAML::Node n = ConfigReader::Get(sources, "ibcounters"); n.IsDefined()) {
    if (r.Map(n, "sources.ibcounters", {"enabled", "sysfs_root", "interval"})) {
      r.Bool(n, "enabled", c.ibcounters_enabled);
      r.String(n, "sysfs_root", c.ibcounters.sysfs_root);
      r.Duration(n, "interval", c.ibcounters.interval);
    }
  }
  if (YAML::Node n = ConfigReader::Get(sources, "file"); n.IsDefined()) {
    if (!n.IsSequence()) {
      r.Error(n, "C003", "sources.file must be a list of {path, follow, origin}");
      return;
    }
    for (const YAML::Node& item : n) {
      if (!r.Map(item, "sources.file[]", {"path", "follow", "origin"})) continue;
      FileSourceConfig f;
      r.String(item, "path", f.path);
      r.Bool(item, "follow", f.follow);
      r.OriginValue(item, "origin", f.origin);
      if (f.path.empty()) r.Error(item, "C004", "sources.file entry needs a path");
      c.files.push_back(std::move(f));
    }
  }
}

void ReadKafka(ConfigReader& r, const YAML::Node& kafka, AgentConfig& c) {
  if (!r.Map(kafka, "kafka",
             {"brokers", "topic", "properties", "message_timeout", "queue_max_messages",
              "compression", "linger"})) {
    return;
  }
  r.String(kafka, "brokers", c.kafka.brokers);
  r.String(kafka, "topic", c.kafka.topic);
  r.Duration(kafka, "message_timeout", c.kafka.message_timeout);
  r.Number(kafka, "queue_max_messages", c.kafka.queue_max_messages, 1);
  r.String(kafka, "compression", c.kafka.compression);
  r.Duration(kafka, "linger", c.kafka.linger);
  if (YAML::Node p = ConfigReader::Get(kafka, "properties"); p.IsDefined()) {
    if (!p.IsMap()) {
      r.Error(p, "C003", "kafka.properties must be a mapping of librdkafka properties");
    } else {
      for (auto it = p.begin(); it != p.end(); ++it) {
        if (r.Scalar(it->second, it->first.Scalar())) {
          c.kafka.properties[it->first.Scalar()] = it->second.Scalar();
        }
      }
    }
  }
  static constexpr std::string_view kCodecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
  bool codec_ok = false;
  for (std::string_view codec : kCodecs) codec_ok = codec_ok || codec == c.kafka.compression;
  if (!codec_ok) {
    r.Error(
        ConfigReader::Get(kafka, "compression"), "C003",
        "kafka.compression: '" + c.kafka.compression + "' is not none, gzip, snappy, lz4 or zstd");
  }
}

void ReadKubernetes(ConfigReader& r, const YAML::Node& k, StandaloneConfig& c) {
  if (!r.Map(k, "kubernetes", {"kubeconfig", "context", "qps", "burst", "request_timeout"})) {
    return;
  }
  r.String(k, "kubeconfig", c.kubeconfig);
  r.String(k, "context", c.context);
  if (YAML::Node q = ConfigReader::Get(k, "qps"); q.IsDefined() && r.Scalar(q, "qps")) {
    char* end = nullptr;
    const double v = std::strtod(q.Scalar().c_str(), &end);
    if (q.Scalar().empty() || *end != '\0' || !(v >= 0)) {
      r.Error(q, "C003", "kubernetes.qps: '" + q.Scalar() + "' is not a number >= 0");
    } else {
      c.qps = v;
    }
  }
  r.Number(k, "burst", c.burst, 1);
  r.Duration(k, "request_timeout", c.request_timeout);
}

void ReadStandalone(ConfigReader& r, const YAML::Node& n, StandaloneConfig& c) {
  if (!r.Map(
          n, "standalone",
          {"dry_run", "taint", "annotation", "max_annotation_bytes", "opt_out_label", "valve"})) {
    return;
  }
  r.Bool(n, "dry_run", c.dry_run);
  if (YAML::Node t = ConfigReader::Get(n, "taint"); t.IsDefined()) {
    if (r.Map(t, "standalone.taint", {"key", "value", "effect"})) {
      r.String(t, "key", c.taint_key);
      r.String(t, "value", c.taint_value);
      r.String(t, "effect", c.taint_effect);
      if (c.taint_effect != "NoSchedule" && c.taint_effect != "PreferNoSchedule" &&
          c.taint_effect != "NoExecute") {
        r.Error(ConfigReader::Get(t, "effect"), "C003",
                "standalone.taint.effect: '" + c.taint_effect +
                    "' is not NoSchedule, PreferNoSchedule or NoExecute");
      }
      if (c.taint_key.empty()) r.Error(t, "C004", "standalone.taint.key must not be empty");
    }
  }
  r.String(n, "annotation", c.annotation);
  r.Number(n, "max_annotation_bytes", c.max_annotation_bytes, std::size_t{1024});
  r.String(n, "opt_out_label", c.opt_out_label);
  if (YAML::Node v = ConfigReader::Get(n, "valve"); v.IsDefined()) {
    if (r.Map(v, "standalone.valve", {"max_new_taints", "window", "event_interval"})) {
      r.Number(v, "max_new_taints", c.max_new_taints, 0);
      r.Duration(v, "window", c.valve_window);
      r.Duration(v, "event_interval", c.event_interval);
    }
  }
}

}  // namespace

std::optional<AgentConfig> ParseAgentConfig(std::string_view yaml_text, std::string_view file,
                                            Diagnostics& diags) {
  return ParseAgentConfig(yaml_text, file, diags, AgentMode::kKafka);
}

std::optional<AgentConfig> ParseAgentConfig(std::string_view yaml_text, std::string_view file,
                                            Diagnostics& diags, AgentMode mode) {
  const std::size_t errors_before = diags.error_count();
  ConfigReader r(std::string(file), diags);
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
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    diags.Error("C001", {std::string(file), e.mark.line + 1, e.mark.column + 1}, e.msg);
    return std::nullopt;
  }
  try {
    if (root.IsNull() || !root.IsDefined()) root = YAML::Node(YAML::NodeType::Map);
    if (r.Map(root, "the config",
              {"node_name", "state_dir", "log_level", "metrics_address", "shutdown_grace",
               "suppression_window", "suppression_max_folded", "checkpoint_interval", "queue",
               "rules", "sources", "kafka", "kubernetes", "standalone"})) {
      r.String(root, "node_name", c.node_name);
      r.String(root, "state_dir", c.state_dir);
      std::string level = "info";
      r.String(root, "log_level", level);
      if (!ParseLogLevel(level, &c.log_level)) {
        r.Error(ConfigReader::Get(root, "log_level"), "C003",
                "log_level: '" + level + "' is not debug, info, warn or error");
      }
      r.String(root, "metrics_address", c.metrics_address);
      r.Duration(root, "shutdown_grace", c.shutdown_grace);
      r.Duration(root, "suppression_window", c.suppression_window);
      r.Number(root, "suppression_max_folded", c.suppression_max_folded, std::uint64_t{1});
      r.Duration(root, "checkpoint_interval", c.checkpoint_interval);
      if (YAML::Node q = ConfigReader::Get(root, "queue"); q.IsDefined()) {
        if (r.Map(q, "queue",
                  {"max_batch_records", "max_queued_batches", "max_uncommitted_records"})) {
          r.Number(q, "max_batch_records", c.max_batch_records, std::size_t{1});
          r.Number(q, "max_queued_batches", c.max_queued_batches, std::size_t{1});
          r.Number(q, "max_uncommitted_records", c.max_uncommitted_records, std::size_t{1});
        }
      }
      if (YAML::Node rules = ConfigReader::Get(root, "rules"); rules.IsDefined()) {
        if (r.Map(rules, "rules", {"builtin", "paths", "reload_debounce"})) {
          r.Bool(rules, "builtin", c.rules.builtin);
          r.StringList(rules, "paths", c.rules.paths);
          r.Duration(rules, "reload_debounce", c.rules_reload_debounce);
        }
      }
      if (YAML::Node s = ConfigReader::Get(root, "sources"); s.IsDefined()) ReadSources(r, s, c);
      if (YAML::Node k = ConfigReader::Get(root, "kafka"); k.IsDefined()) {
        ReadKafka(r, k, c);
      }
      if (YAML::Node k = ConfigReader::Get(root, "kubernetes"); k.IsDefined()) {
        ReadKubernetes(r, k, c.standalone);
      }
      if (YAML::Node s = ConfigReader::Get(root, "standalone"); s.IsDefined()) {
        ReadStandalone(r, s, c.standalone);
      }
      if (mode == AgentMode::kKafka && c.kafka.brokers.empty()) {
        r.Error(root, "C004", "kafka.brokers is required (bootstrap servers, host:port,...)");
      }
      if (c.suppression_max_folded >= c.max_uncommitted_records) {
        r.Error(root, "C003",
                "suppression_max_folded (" + std::to_string(c.suppression_max_folded) +
                    ") must be below queue.max_uncommitted_records (" +
                    std::to_string(c.max_uncommitted_records) +
                    "), or a flood could stall its source");
      }
      if (c.checkpoint_interval.count() <= 0) {
        r.Error(ConfigReader::Get(root, "checkpoint_interval"), "C003",
                "checkpoint_interval must be above 0s");
      }
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
checkpoint_interval: 1s     # how often committed positions are written to state_dir
queue:
  max_batch_records: 256    # records per Read()
  max_queued_batches: 64    # batches between readers and the match thread (backpressure)
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
# Only with --standalone (no Kafka; the tainter's policy runs in the agent, on its own node):
kubernetes:
  kubeconfig: ""            # "" = in-cluster, else $KUBECONFIG, else ~/.kube/config; none = dry run
  context: ""               # "" = current-context
  qps: 5
  burst: 10
  request_timeout: 10s
standalone:
  dry_run: false            # print the patches instead of sending them (also --dry-run)
  taint: {key: faultline.dev/faulty, value: "true", effect: NoSchedule}
  annotation: faultline.dev/reasons
  max_annotation_bytes: 16384
  opt_out_label: faultline.dev/opt-out=true
  valve:
    max_new_taints: 5       # new taints per window (0 = no limit); fractions do not apply to one node
    window: 10m
    event_interval: 10m     # at most one Event per rule in this interval for repeats
)yaml";
}

}  // namespace faultline
