// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collector/checks/check.h"
#include "collector/checks/gpu_inventory_check.h"

namespace faultline {

// PCIe link training, from sysfs (current_link_width/max_link_width,
// current_link_speed/max_link_speed) of every accelerator and NIC
// (ListAcceleratorsAndNics). "PCIe link width low" is the most common GPU
// failure in a published 348-day trace of 400 GPU servers.
//
//   device=<addr> counter=pcie_width value=<x8> expected=<x16> role=<kind|nic>  fail when below
//   device=<addr> counter=pcie_speed value=<8.0GT/s> expected=<16.0GT/s> role=nic  fail when below
//   device=node counter=pcie_width|pcie_speed value=<passed> expected=<checked>  (clears)
//
// Speed is judged for NICs only: GPUs lower their link speed when idle to
// save power (an idle H100 shows 2.5 GT/s), so a GPU's speed below its
// maximum is normal; its width is not.
class PcieLinkCheck final : public Check {
 public:
  PcieLinkCheck(std::string sysfs_root, std::vector<AcceleratorKind> kinds)
      : sysfs_root_(std::move(sysfs_root)), kinds_(std::move(kinds)) {}
  std::string_view name() const override { return "pcie-link"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  std::string sysfs_root_;
  std::vector<AcceleratorKind> kinds_;
};

// PCIe Advanced Error Reporting counters (sysfs aer_dev_fatal,
// aer_dev_nonfatal: "TOTAL_ERR_FATAL <n>", "TOTAL_ERR_NONFATAL <n>") of every
// accelerator and NIC, against the first reading since start (the counters
// are cleared by a reboot, as is the baseline):
//
//   device=<addr> counter=aer_fatal|aer_nonfatal value=<total> expected=<baseline> role=..
//     fail when above the baseline
//   device=node counter=aer_fatal|aer_nonfatal value=<passed> expected=<checked>  (clears)
//
// Devices without AER (no such files: the kernel or the port lacks it)
// report nothing.
class AerCheck final : public Check {
 public:
  AerCheck(std::string sysfs_root, std::vector<AcceleratorKind> kinds)
      : sysfs_root_(std::move(sysfs_root)), kinds_(std::move(kinds)) {}
  std::string_view name() const override { return "pcie-aer"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  std::string sysfs_root_;
  std::vector<AcceleratorKind> kinds_;
  std::map<std::string, unsigned long long> baseline_;  // "<addr> <counter>" -> first total
};

// The value of `key` in an AER counter file ("TOTAL_ERR_FATAL 3"), or -1.
long long AerTotal(const std::string& text, const std::string& key);
// "16.0 GT/s PCIe" -> 16.0; "Unknown" or malformed -> -1.
double ParseLinkSpeed(const std::string& text);

}  // namespace faultline
