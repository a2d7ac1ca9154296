// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "collector/checks/check.h"

namespace faultline {

// AMD Instinct RAS error counters, as the amdgpu driver exposes them in
// sysfs (Documentation/gpu/amdgpu/ras.rst): one file per hardware block,
// <root>/bus/pci/devices/<address>/ras/<block>_err_count (umc, gfx, sdma,
// mmhub, xgmi_wafl, pcie_bif, hdp, ...), each
//   ue: <uncorrectable>
//   ce: <correctable>
//   [de: <deferred>]         (UMC, on newer kernels)
// counted since the driver loaded. For every AMD accelerator (vendor 0x1002,
// class 0x0380 or 0x1200) and block:
//
//   device=<addr> counter=<block>_ue value=<n> expected=0 block=<block>
//     fail when not 0: an uncorrectable error since the driver loaded
//   device=<addr> counter=<block>_ce|<block>_de value=<n> expected=<previous> block=<block>
//     fail when it grew since the previous run (the first run is the baseline)
//
// A device without a ras/ directory (RAS off, or not an Instinct part) and
// a file that does not read as above report nothing for it.
class AmdRasCheck final : public Check {
 public:
  explicit AmdRasCheck(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}
  std::string_view name() const override { return "amd-ras"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  std::string sysfs_root_;
  std::map<std::string, unsigned long long> previous_;  // "<addr> <counter>" -> last value
};

// The counts of an err_count file: ue, ce and (when present) de.
// nullopt: not "ue: <n>\nce: <n>[\nde: <n>]".
struct RasCounts {
  unsigned long long ue = 0;
  unsigned long long ce = 0;
  std::optional<unsigned long long> de;
};
std::optional<RasCounts> ParseRasErrCount(std::string_view text);

}  // namespace faultline
