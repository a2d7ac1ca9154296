// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/nvidia_proc_check.h"

#include <filesystem>

#include "collector/checks/gpu_inventory_check.h"
#include "collector/checks/pci_devices.h"

namespace faultline {

std::vector<CheckFinding> NvidiaProcCheck::Run(std::stop_token /*stop*/) {
  namespace fs = std::filesystem;
  std::vector<std::string> gpus;
  for (const PciDevice& d :
       ListAcceleratorsAndNics(sysfs_root_, {*BuiltinAcceleratorKind("nvidia")})) {
    if (d.role == "nvidia") gpus.push_back(d.address);
  }
  if (gpus.empty()) return {};
  std::vector<CheckFinding> out;
  const fs::path driver = fs::path(procfs_root_) / "driver" / "nvidia";
  std::error_code ec;
  const bool loaded = fs::exists(driver / "version", ec);
  CheckFinding module;
  module.status = loaded ? CheckStatus::kOk : CheckStatus::kFail;
  module.fields = {{"device", "node"},
                   {"counter", "driver"},
                   {"value", loaded ? "loaded" : "missing"},
                   {"expected", "loaded"}};
  module.message = loaded ? "the NVIDIA driver is loaded"
                          : std::to_string(gpus.size()) + " NVIDIA GPUs on the PCI bus but no " +
                                (driver / "version").string();
  out.push_back(std::move(module));
  if (!loaded) return out;
  int present = 0;
  for (const std::string& address : gpus) {
    const bool known = fs::is_directory(driver / "gpus" / address, ec);
    present += known ? 1 : 0;
    CheckFinding f;
    f.status = known ? CheckStatus::kOk : CheckStatus::kFail;
    f.fields = {{"device", address},
                {"counter", "driver_gpu"},
                {"value", known ? "present" : "absent"},
                {"expected", "present"}};
    f.message = known ? "the driver has the GPU"
                      : "on the PCI bus but not in /proc/driver/nvidia/gpus: the driver did not "
                        "initialise it";
    out.push_back(std::move(f));
  }
  CheckFinding summary;
  summary.status = present == static_cast<int>(gpus.size()) ? CheckStatus::kOk : CheckStatus::kFail;
  summary.fields = {{"device", "node"},
                    {"counter", "driver_gpu"},
                    {"value", std::to_string(present)},
                    {"expected", std::to_string(gpus.size())}};
  summary.message = std::to_string(present) + " of " + std::to_string(gpus.size()) +
                    " NVIDIA GPUs initialised by the driver";
  out.push_back(std::move(summary));
  return out;
}

}  // namespace faultline
