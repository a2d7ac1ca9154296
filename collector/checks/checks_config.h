// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config_reader.h"
#include "base/log_record.h"
#include "base/status.h"
#include "collector/checks/check_source.h"

namespace faultline {

// One `checks.exec[]` entry: a command speaking NPD's custom-plugin protocol.
struct ExecCheckConfig {
  std::string name;
  std::string path;
  std::vector<std::string> args;
  std::chrono::milliseconds interval{60'000};
  std::chrono::milliseconds timeout{10'000};
  std::size_t max_output_length = 80;
  // Run until it passes once after the boot, then not again; a round that
  // lacks its pass does not validate a reboot (CheckSource "Rounds").
  bool validation = false;
};

// The agent's `checks:` section (collector/README.md, "checks").
struct ChecksConfig {
  std::size_t concurrency = 2;
  std::chrono::milliseconds jitter{5000};
  std::chrono::milliseconds repeat{300'000};  // CheckSource::Options::repeat_interval
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";

  CheckSchedule gpu_inventory{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};
  std::map<std::string, int> gpu_expected;  // kind -> count; empty: baselines
  // kind -> the node label that holds its count (nvidia: nvidia.com/gpu.count).
  // Only the standalone agent reads its Node (ApplyNodeLabels); `gpu_expected`
  // of a kind wins over its label.
  std::map<std::string, std::string> gpu_expected_labels;
  // Link width/speed of accelerators and NICs.
  CheckSchedule pcie{std::chrono::milliseconds(300'000), std::chrono::milliseconds(10'000)};
  // PCIe AER fatal/non-fatal counters.
  CheckSchedule aer{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};
  // AMD RAS error counters in sysfs (amd_ras_check.h).
  CheckSchedule amd_ras{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};
  // /proc/driver/nvidia against the PCI bus.
  CheckSchedule nvidia_driver{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};

  std::string nvml_library = "libnvidia-ml.so.1";
  CheckSchedule nvml{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};
  std::optional<int> nvml_expected;
  unsigned long long nvml_ecc_aggregate_max = 0;
  // Xid events through NVML's event API (nvml_xid_check.h): each run only
  // takes what NVML queued, so a short interval is cheap.
  CheckSchedule nvml_xid{std::chrono::milliseconds(10'000), std::chrono::milliseconds(5000)};

  // dcgm-exporter's /metrics on this node (opt-in: it loads libcurl).
  std::string dcgm_url = "http://localhost:9400/metrics";
  CheckSchedule dcgm{std::chrono::milliseconds(60'000), std::chrono::milliseconds(10'000)};

  // Commands: the environment and working directory of every one of them
  // (exec[] and the NPD configs' rules).
  std::map<std::string, std::string> exec_env;  // empty: PATH only (DefaultCheckEnvironment)
  std::string exec_working_dir = "/";
  std::vector<ExecCheckConfig> exec;
  std::vector<std::string> npd_configs;  // custom-plugin-monitor JSON files, read at start

  // Which checks run; the flags sit together at the end, where they pad the
  // struct least.
  bool enabled = true;
  bool gpu_inventory_enabled = true;
  bool pcie_enabled = true;
  bool aer_enabled = true;
  bool nvidia_driver_enabled = true;
  bool amd_ras_enabled = true;
  bool nvml_enabled = true;  // without the library: said once, skipped
  bool nvml_xid_enabled = true;
  bool node_labels_applied = false;  // ApplyNodeLabels ran (the standalone agent)
  bool dcgm_enabled = false;
};

// The keys of the `checks:` mapping.
const std::vector<std::string_view>& ChecksConfigKeys();

// Reads `checks:` (the mapping under that key) into `out`; problems go to
// the reader's diagnostics as C002/C003/C004.
void ReadChecksConfig(const ConfigMap& checks, ChecksConfig& out);

// Sets the expected GPU count of each kind in `gpu_expected_labels` from the
// node's `labels` (and NVML's expected count from the nvidia one), where the
// config does not set that count itself. A label that is absent or not a
// count (0-1024) is logged and leaves the baseline. Marks the config so
// OpenCheckSource does not warn that the labels were never read.
void ApplyNodeLabels(const std::map<std::string, std::string>& labels, ChecksConfig& config);

// Builds the check source the config asks for. nullptr (OK) when checks
// are off or none is configured. NVML that cannot be loaded is logged once
// and skipped (a node without NVIDIA GPUs, or a pod without their devices).
// kInvalidArgument / kNotFound: an NPD config that cannot be read or parsed
// (its file and the reason in the message).
// `fail_holds_round`: CheckSource::Options::fail_holds_round (the agent
// passes its rules' answer).
Result<std::unique_ptr<CheckSource>> OpenCheckSource(
    const ChecksConfig& config, const Clock& clock,
    std::function<bool(const LogRecord& record)> fail_holds_round = {});

}  // namespace faultline
