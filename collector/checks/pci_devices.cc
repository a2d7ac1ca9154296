// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/pci_devices.h"

#include <algorithm>
#include <filesystem>

#include "collector/checks/sysfs_read.h"

namespace faultline {

std::vector<PciDevice> ListAcceleratorsAndNics(const std::string& sysfs_root,
                                               const std::vector<AcceleratorKind>& kinds) {
  namespace fs = std::filesystem;
  std::vector<PciDevice> out;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(sysfs_root) / "bus" / "pci" / "devices", ec), end;
       !ec && it != end; it.increment(ec)) {
    const auto vendor = ReadSysfsNumber(it->path() / "vendor");
    const auto pci_class = ReadSysfsNumber(it->path() / "class");
    if (!vendor || !pci_class) continue;
    PciDevice d;
    d.address = it->path().filename().string();
    d.vendor = static_cast<std::uint32_t>(*vendor);
    d.pci_class = static_cast<std::uint32_t>(*pci_class >> 8);
    for (const AcceleratorKind& k : kinds) {
      if (d.vendor == k.vendor &&
          std::find(k.classes.begin(), k.classes.end(), d.pci_class) != k.classes.end()) {
        d.role = k.name;
      }
    }
    if (d.role.empty() && (d.pci_class == 0x0200 || d.pci_class == 0x0207)) d.role = "nic";
    if (!d.role.empty()) out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.address < b.address; });
  return out;
}

}  // namespace faultline
