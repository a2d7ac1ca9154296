// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "collector/checks/check.h"

namespace faultline {

// NVIDIA driver state under /proc/driver/nvidia, against the NVIDIA GPUs on
// the PCI bus (vendor 0x10de, class 0x0300/0x0302): catches the node whose
// GPU never came up after a reboot (RmInitAdapter failed, the module not
// loaded) without any library.
//
//   device=node counter=driver value=loaded|missing  fail when GPUs are on the
//     bus but <proc>/driver/nvidia/version is not there
//   device=<addr> counter=driver_gpu value=present|absent  fail when the GPU is
//     on the bus but not in <proc>/driver/nvidia/gpus/
//   device=node counter=driver_gpu value=<present> expected=<on the bus>  (clears)
//
// A node without NVIDIA GPUs reports nothing.
class NvidiaProcCheck final : public Check {
 public:
  NvidiaProcCheck(std::string sysfs_root, std::string procfs_root)
      : sysfs_root_(std::move(sysfs_root)), procfs_root_(std::move(procfs_root)) {}
  std::string_view name() const override { return "nvidia-driver"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  std::string sysfs_root_;
  std::string procfs_root_;
};

}  // namespace faultline
