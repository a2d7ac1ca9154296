// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/gpu_inventory_check.h"

#include <algorithm>
#include <filesystem>

#include "collector/checks/check_record.h"
#include "collector/checks/sysfs_read.h"

namespace faultline {

std::optional<AcceleratorKind> BuiltinAcceleratorKind(const std::string& name) {
  if (name == "nvidia") return AcceleratorKind{"nvidia", 0x10de, {0x0300, 0x0302}, std::nullopt};
  if (name == "amd") return AcceleratorKind{"amd", 0x1002, {0x0380, 0x1200}, std::nullopt};
  if (name == "habana") return AcceleratorKind{"habana", 0x1da3, {0x1200}, std::nullopt};
  if (name == "neuron") return AcceleratorKind{"neuron", 0x1d0f, {0x0880}, std::nullopt};
  return std::nullopt;
}

std::vector<std::string> BuiltinAcceleratorKindNames() {
  return {"nvidia", "amd", "habana", "neuron"};
}

GpuInventoryCheck::GpuInventoryCheck(Options options) : options_(std::move(options)) {
  if (options_.kinds.empty()) {
    for (const std::string& n : BuiltinAcceleratorKindNames()) {
      options_.kinds.push_back(*BuiltinAcceleratorKind(n));
    }
  }
}

std::vector<CheckFinding> GpuInventoryCheck::Run(std::stop_token /*stop*/) {
  namespace fs = std::filesystem;
  const fs::path devices = fs::path(options_.sysfs_root) / "bus" / "pci" / "devices";
  std::error_code ec;
  std::map<std::string, std::set<std::string>> found;  // kind -> addresses
  fs::directory_iterator it(devices, ec);
  if (ec) {
    CheckFinding f;
    f.status = CheckStatus::kUnknown;
    f.fields = {{"device", "node"}, {"counter", "pci"}};
    f.message = "cannot list " + devices.string() + ": " + ec.message();
    return {f};
  }
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const std::optional<std::uint64_t> vendor = ReadSysfsNumber(it->path() / "vendor");
    const std::optional<std::uint64_t> pci_class = ReadSysfsNumber(it->path() / "class");
    if (!vendor || !pci_class) continue;
    for (const AcceleratorKind& kind : options_.kinds) {
      const auto cls = static_cast<std::uint32_t>(*pci_class >> 8);
      if (*vendor == kind.vendor &&
          std::find(kind.classes.begin(), kind.classes.end(), cls) != kind.classes.end()) {
        found[kind.name].insert(it->path().filename().string());
      }
    }
  }

  std::vector<CheckFinding> findings;
  for (const AcceleratorKind& kind : options_.kinds) {
    const std::set<std::string>& now = found[kind.name];
    const int count = static_cast<int>(now.size());
    int& baseline = baseline_[kind.name];
    std::set<std::string>& seen = seen_[kind.name];
    const bool from_config = kind.expected.has_value();
    const int expected = from_config ? *kind.expected : std::max(baseline, count);
    baseline = std::max(baseline, count);
    if (!from_config && expected == 0) continue;

    std::string missing;
    for (const std::string& address : seen) {
      if (now.count(address) == 0) missing += (missing.empty() ? "" : ",") + address;
    }
    seen.insert(now.begin(), now.end());

    CheckFinding f;
    f.status = count < expected ? CheckStatus::kFail : CheckStatus::kOk;
    f.fields = {{"device", "node"},
                {"counter", kind.name},
                {"value", std::to_string(count)},
                {"expected", std::to_string(expected)}};
    if (count < expected) f.fields.emplace_back("missing", MissingOrUnknown(missing));
    f.message = std::to_string(count) + " of " + std::to_string(expected) + " " + kind.name +
                " accelerators on the PCI bus" +
                (from_config ? "" : " (baseline: most seen since start)");
    if (count > expected) f.message += "; more than expected";
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace faultline
