// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/checks/gpu_inventory_check.h"

namespace faultline {

// A PCI function as sysfs shows it under <root>/bus/pci/devices/<address>.
struct PciDevice {
  std::string address;  // 0000:3b:00.0
  std::uint32_t vendor = 0;
  std::uint32_t pci_class = 0;  // the top 16 bits of sysfs `class`: 0x0302
  std::string role;             // the accelerator kind ("nvidia"), or "nic"
};

// The accelerators (by `kinds`) and network adapters (class 0x0200 Ethernet,
// 0x0207 InfiniBand) on the bus, sorted by address; other functions are
// left out. An unreadable tree is an empty list.
std::vector<PciDevice> ListAcceleratorsAndNics(const std::string& sysfs_root,
                                               const std::vector<AcceleratorKind>& kinds);

}  // namespace faultline
