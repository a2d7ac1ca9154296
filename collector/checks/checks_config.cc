// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/checks_config.h"

#include <algorithm>
#include <cstdlib>

#include "base/log.h"
#include "collector/checks/amd_ras_check.h"
#include "collector/checks/dcgm_exporter_check.h"
#include "collector/checks/exec_check.h"
#include "collector/checks/gpu_inventory_check.h"
#include "collector/checks/http_get.h"
#include "collector/checks/npd_plugin_config.h"
#include "collector/checks/nvidia_proc_check.h"
#include "collector/checks/nvml_check.h"
#include "collector/checks/nvml_xid_check.h"
#include "collector/checks/pcie_checks.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "checks";

void ReadSchedule(const ConfigMap& m, CheckSchedule& s) {
  m.Duration("interval", s.interval, false);
  m.Duration("timeout", s.timeout, false);
}

}  // namespace

const std::vector<std::string_view>& ChecksConfigKeys() {
  static const std::vector<std::string_view> kKeys = {
      "enabled",       "concurrency", "jitter",      "repeat",        "sysfs_root", "procfs_root",
      "gpu_inventory", "pcie",        "aer",         "nvidia_driver", "amd_ras",    "nvml",
      "dcgm",          "env",         "working_dir", "exec",          "npd"};
  return kKeys;
}

void ReadChecksConfig(const ConfigMap& checks, ChecksConfig& c) {
  checks.Bool("enabled", c.enabled);
  checks.Number("concurrency", c.concurrency, std::size_t{1});
  checks.Duration("jitter", c.jitter, true);
  checks.Duration("repeat", c.repeat, true);
  checks.String("sysfs_root", c.sysfs_root);
  if (auto g = checks.Sub("gpu_inventory",
                          {"enabled", "interval", "timeout", "expected", "expected_labels"})) {
    g->Bool("enabled", c.gpu_inventory_enabled);
    ReadSchedule(*g, c.gpu_inventory);
    std::map<std::string, std::string> expected;
    g->StringMap("expected", expected);
    for (const auto& [kind, count] : expected) {
      const std::vector<std::string> known = BuiltinAcceleratorKindNames();
      if (std::find(known.begin(), known.end(), kind) == known.end()) {
        g->Error("expected", "C003",
                 "'checks.gpu_inventory.expected' has unknown kind '" + kind +
                     "' (nvidia, amd, habana or neuron)");
        continue;
      }
      char* end = nullptr;
      const long n = std::strtol(count.c_str(), &end, 10);
      if (count.empty() || *end != '\0' || n < 0 || n > 1024) {
        std::string message = "'checks.gpu_inventory.expected.";
        message += kind;
        message += "' must be a count, not '";
        message += count;
        message += "'";
        g->Error("expected", "C003", std::move(message));
        continue;
      }
      c.gpu_expected[kind] = static_cast<int>(n);
    }
    g->StringMap("expected_labels", c.gpu_expected_labels);
    const std::vector<std::string> known = BuiltinAcceleratorKindNames();
    for (const auto& [kind, label] : c.gpu_expected_labels) {
      if (std::find(known.begin(), known.end(), kind) == known.end()) {
        g->Error("expected_labels", "C003",
                 "'checks.gpu_inventory.expected_labels' has unknown kind '" + kind +
                     "' (nvidia, amd, habana or neuron)");
      } else if (label.empty()) {
        g->Error("expected_labels", "C003",
                 "'checks.gpu_inventory.expected_labels." + kind + "' needs a label key");
      }
    }
  }
  if (auto p = checks.Sub("pcie", {"enabled", "interval", "timeout"})) {
    p->Bool("enabled", c.pcie_enabled);
    ReadSchedule(*p, c.pcie);
  }
  if (auto a = checks.Sub("aer", {"enabled", "interval", "timeout"})) {
    a->Bool("enabled", c.aer_enabled);
    ReadSchedule(*a, c.aer);
  }
  if (auto r = checks.Sub("amd_ras", {"enabled", "interval", "timeout"})) {
    r->Bool("enabled", c.amd_ras_enabled);
    ReadSchedule(*r, c.amd_ras);
  }
  checks.String("procfs_root", c.procfs_root);
  if (auto d = checks.Sub("nvidia_driver", {"enabled", "interval", "timeout"})) {
    d->Bool("enabled", c.nvidia_driver_enabled);
    ReadSchedule(*d, c.nvidia_driver);
  }
  if (auto n = checks.Sub("nvml", {"enabled", "library", "interval", "timeout", "expected",
                                   "ecc_aggregate_max", "xid_events", "xid_interval"})) {
    n->Bool("enabled", c.nvml_enabled);
    n->String("library", c.nvml_library);
    ReadSchedule(*n, c.nvml);
    if (n->Get("expected").IsDefined()) {
      long long v = 0;
      n->Integer("expected", v, 0);
      c.nvml_expected = static_cast<int>(v);
    }
    n->Number("ecc_aggregate_max", c.nvml_ecc_aggregate_max, 0ULL);
    n->Bool("xid_events", c.nvml_xid_enabled);
    n->Duration("xid_interval", c.nvml_xid.interval, false);
  }
  if (auto d = checks.Sub("dcgm", {"enabled", "url", "interval", "timeout"})) {
    d->Bool("enabled", c.dcgm_enabled);
    d->String("url", c.dcgm_url);
    ReadSchedule(*d, c.dcgm);
    if (c.dcgm_url.rfind("http://", 0) != 0 && c.dcgm_url.rfind("https://", 0) != 0) {
      d->Error("url", "C003",
               "'checks.dcgm.url' must be an http:// or https:// URL, not '" + c.dcgm_url + "'");
    }
  }
  checks.StringMap("env", c.exec_env);
  checks.String("working_dir", c.exec_working_dir);
  if (YAML::Node list = checks.Get("exec"); list.IsDefined()) {
    if (!list.IsSequence()) {
      checks.Error("exec", "C003", "'checks.exec' must be a list of {name, path, args, ...}");
    } else {
      for (const YAML::Node& item : list) {
        ConfigMap e(
            checks.reader(), item, "checks.exec[]",
            {"name", "path", "args", "interval", "timeout", "max_output_length", "validation"});
        if (!e.valid()) continue;
        ExecCheckConfig x;
        e.String("name", x.name);
        e.String("path", x.path);
        e.StringList("args", x.args);
        e.Duration("interval", x.interval, false);
        e.Duration("timeout", x.timeout, false);
        e.Number("max_output_length", x.max_output_length, std::size_t{1});
        e.Bool("validation", x.validation);
        if (x.name.empty() || x.path.empty()) {
          checks.reader().Error(item, "C004", "a checks.exec entry needs a name and a path");
        }
        c.exec.push_back(std::move(x));
      }
    }
  }
  if (auto npd = checks.Sub("npd", {"configs"})) npd->StringList("configs", c.npd_configs);
}

void ApplyNodeLabels(const std::map<std::string, std::string>& labels, ChecksConfig& config) {
  config.node_labels_applied = true;
  for (const auto& [kind, key] : config.gpu_expected_labels) {
    if (config.gpu_expected.count(kind) != 0) {
      LogInfo(kComponent, "expected GPU count set in the config; node label not used",
              {{"kind", kind}, {"label", key}});
      continue;
    }
    auto it = labels.find(key);
    if (it == labels.end()) {
      LogInfo(kComponent, "node label absent; expected GPU count is the baseline",
              {{"kind", kind}, {"label", key}});
      continue;
    }
    char* end = nullptr;
    const long n = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || n < 0 || n > 1024) {
      LogWarning(kComponent, "node label is not a GPU count; expected GPU count is the baseline",
                 {{"kind", kind}, {"label", key}, {"value", it->second}});
      continue;
    }
    config.gpu_expected[kind] = static_cast<int>(n);
    if (kind == "nvidia" && !config.nvml_expected) config.nvml_expected = static_cast<int>(n);
    LogInfo(kComponent, "expected GPU count from node label",
            {{"kind", kind}, {"label", key}, {"count", n}});
  }
}

Result<std::unique_ptr<CheckSource>> OpenCheckSource(
    const ChecksConfig& config, const Clock& clock,
    std::function<bool(const LogRecord& record)> fail_holds_round) {
  if (!config.enabled) return std::unique_ptr<CheckSource>();
  if (!config.gpu_expected_labels.empty() && !config.node_labels_applied) {
    // The Kafka-mode agent has no Kubernetes credentials by design.
    LogWarning(kComponent,
               "checks.gpu_inventory.expected_labels ignored: only the standalone agent reads "
               "its node; expected GPU counts come from checks.gpu_inventory.expected or the "
               "baseline");
  }
  CheckSource::Options options;
  options.concurrency = config.concurrency;
  options.repeat_interval = config.repeat;
  options.rounds = true;  // the evidence for a verified return to service
  options.fail_holds_round = std::move(fail_holds_round);
  std::vector<CheckSource::Entry> entries;
  auto with_jitter = [&](CheckSchedule s) {
    s.jitter = std::min(config.jitter, s.interval / 2);
    return s;
  };

  if (config.gpu_inventory_enabled) {
    GpuInventoryCheck::Options o;
    o.sysfs_root = config.sysfs_root;
    for (const std::string& name : BuiltinAcceleratorKindNames()) {
      AcceleratorKind kind = *BuiltinAcceleratorKind(name);
      if (auto it = config.gpu_expected.find(name); it != config.gpu_expected.end()) {
        kind.expected = it->second;
      }
      o.kinds.push_back(std::move(kind));
    }
    entries.push_back(
        {std::make_unique<GpuInventoryCheck>(o), with_jitter(config.gpu_inventory), ""});
  }
  std::vector<AcceleratorKind> kinds;
  for (const std::string& name : BuiltinAcceleratorKindNames()) {
    kinds.push_back(*BuiltinAcceleratorKind(name));
  }
  if (config.pcie_enabled) {
    entries.push_back(
        {std::make_unique<PcieLinkCheck>(config.sysfs_root, kinds), with_jitter(config.pcie), ""});
  }
  if (config.aer_enabled) {
    entries.push_back(
        {std::make_unique<AerCheck>(config.sysfs_root, kinds), with_jitter(config.aer), ""});
  }
  if (config.amd_ras_enabled) {
    entries.push_back(
        {std::make_unique<AmdRasCheck>(config.sysfs_root), with_jitter(config.amd_ras), ""});
  }
  if (config.nvidia_driver_enabled) {
    entries.push_back({std::make_unique<NvidiaProcCheck>(config.sysfs_root, config.procfs_root),
                       with_jitter(config.nvidia_driver), ""});
  }
  if (config.nvml_enabled) {
    Result<std::shared_ptr<NvmlLibrary>> nvml = NvmlLibrary::Load(config.nvml_library);
    if (nvml.ok()) {
      NvmlCheck::Options o;
      o.expected_count = config.nvml_expected;
      o.ecc_aggregate_max = config.nvml_ecc_aggregate_max;
      entries.push_back({std::make_unique<NvmlCheck>(*nvml, o), with_jitter(config.nvml), ""});
      if (config.nvml_xid_enabled) {
        entries.push_back(
            {std::make_unique<NvmlXidCheck>(*nvml), with_jitter(config.nvml_xid), ""});
      }
      LogInfo(kComponent, "NVML loaded", {{"library", config.nvml_library}});
    } else {
      LogInfo(kComponent, "NVML checks skipped", {{"reason", nvml.error().message()}});
    }
  }
  if (config.dcgm_enabled) {
    if (const Status curl = LoadHttpClient(); curl.ok()) {
      DcgmExporterCheck::Options o;
      o.url = config.dcgm_url;
      // The GET gives up before the run would be reported hung, so a
      // slow exporter is a `timeout` error record, not a hung check.
      o.http.timeout = config.dcgm.timeout * 3 / 4;
      entries.push_back({std::make_unique<DcgmExporterCheck>(o), with_jitter(config.dcgm), ""});
    } else {
      LogInfo(kComponent, "dcgm-exporter check skipped", {{"reason", curl.message()}});
    }
  }
  const std::map<std::string, std::string> env =
      config.exec_env.empty() ? DefaultCheckEnvironment() : config.exec_env;
  for (const ExecCheckConfig& x : config.exec) {
    ExecCheck::Options o;
    o.name = x.name;
    o.path = x.path;
    o.args = x.args;
    o.env = env;
    o.working_dir = config.exec_working_dir;
    o.max_output_length = x.max_output_length;
    CheckSchedule s{x.interval, x.timeout};
    entries.push_back({std::make_unique<ExecCheck>(o), with_jitter(s), "", x.validation});
  }
  for (const std::string& file : config.npd_configs) {
    std::string text;
    FL_RETURN_IF_ERROR(ReadConfigText(file, text));
    Result<NpdPluginConfig> npd = ParseNpdPluginConfig(text, file, env, config.exec_working_dir);
    if (!npd.ok()) return npd.error();
    const std::string group = "npd:" + file;
    options.group_concurrency[group] = npd->concurrency;
    for (std::size_t i = 0; i < npd->rules.size(); ++i) {
      CheckSchedule s{npd->invoke_interval, npd->timeouts[i]};
      entries.push_back({std::make_unique<ExecCheck>(npd->rules[i]), with_jitter(s), group});
    }
  }
  if (entries.empty()) return std::unique_ptr<CheckSource>();
  return CheckSource::Open(options, std::move(entries), clock);
}

}  // namespace faultline
