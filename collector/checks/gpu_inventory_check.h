// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collector/checks/check.h"

namespace faultline {

// A kind of accelerator as the PCI bus shows it: a vendor id and the device
// classes (the top 16 bits of sysfs `class`) its compute devices use. The
// class keeps out the vendor's other functions (an NVSwitch is 0x10de too,
// but a bridge, 0x0680; an AMD GPU's HD-audio function is 0x0403).
struct AcceleratorKind {
  std::string name;                    // "nvidia": the `counter=` of its findings
  std::uint32_t vendor = 0;            // 0x10de
  std::vector<std::uint32_t> classes;  // {0x0300, 0x0302}
  std::optional<int> expected;         // how many this node must have; unset: see below
};

// The built-in kinds: nvidia (0x10de; 0x0300 VGA, 0x0302 3D controller),
// amd (0x1002; 0x0380 display controller as MI100-MI250 show, 0x1200
// processing accelerator as MI300 shows), habana (Intel Gaudi, 0x1da3;
// 0x1200), neuron (AWS Inferentia/Trainium, 0x1d0f; 0x0880 system
// peripheral). Unknown names: nullopt.
std::optional<AcceleratorKind> BuiltinAcceleratorKind(const std::string& name);
std::vector<std::string> BuiltinAcceleratorKindNames();

// Accelerator inventory from sysfs, vendor-neutral and without any GPU
// library: counts <sysfs_root>/bus/pci/devices/*/{vendor,class} per kind and
// compares with the expected count.
//
// Findings, one per kind that has an expected count, a baseline, or devices:
//   check=gpu-inventory status=ok|fail device=node counter=<kind> value=<found>
//     expected=<n> [missing=<addr>,...] msg=...
// `missing` lists the PCI addresses seen by an earlier run that are gone
// (a GPU that fell off the bus, or `nvidia-smi drain`).
//
// With no expected count configured, the expected count is the most
// devices of that kind this process has seen (its baseline, `expected=` is
// then that number and the message says "baseline"): a GPU lost while the
// agent runs is reported, but a GPU that never came up in this boot is not,
// since there is nothing to compare with. Configure `expected` to catch
// that. A kind with no devices and no expected count reports nothing.
// A node whose sysfs has no PCI tree reports `status=unknown`.
class GpuInventoryCheck final : public Check {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    std::vector<AcceleratorKind> kinds;  // empty: every built-in kind, none expected
  };
  explicit GpuInventoryCheck(Options options);

  // Check
  std::string_view name() const override { return "gpu-inventory"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  Options options_;
  std::map<std::string, int> baseline_;                // kind -> most seen
  std::map<std::string, std::set<std::string>> seen_;  // kind -> addresses ever seen
};

}  // namespace faultline
