// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/pcie_checks.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "collector/checks/pci_devices.h"
#include "collector/checks/sysfs_read.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

constexpr std::string_view kLinkCounters[] = {"pcie_width", "pcie_speed"};
constexpr std::string_view kAerCounters[] = {"aer_fatal", "aer_nonfatal"};

}  // namespace

double ParseLinkSpeed(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || v <= 0) return -1;
  return v;
}

long long AerTotal(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string name;
  long long value = 0;
  while (in >> name >> value) {
    if (name == key) return value;
  }
  return -1;
}

std::vector<CheckFinding> PcieLinkCheck::Run(std::stop_token /*stop*/) {
  std::vector<CheckFinding> out;
  const fs::path devices = fs::path(sysfs_root_) / "bus" / "pci" / "devices";
  for (const PciDevice& d : ListAcceleratorsAndNics(sysfs_root_, kinds_)) {
    const fs::path dir = devices / d.address;
    const auto width = ReadSysfsNumber(dir / "current_link_width");
    const auto max_width = ReadSysfsNumber(dir / "max_link_width");
    if (width && max_width && *max_width > 0) {
      CheckFinding f;
      f.status = *width < *max_width ? CheckStatus::kFail : CheckStatus::kOk;
      f.fields = {{"device", d.address},
                  {"counter", "pcie_width"},
                  {"value", "x" + std::to_string(*width)},
                  {"expected", "x" + std::to_string(*max_width)},
                  {"role", d.role}};
      f.message =
          "PCIe link trained at x" + std::to_string(*width) + " of x" + std::to_string(*max_width);
      out.push_back(std::move(f));
    }
    if (d.role != "nic") continue;  // GPUs lower their speed when idle (see the header)
    const auto speed_text = ReadSysfsText(dir / "current_link_speed");
    const auto max_text = ReadSysfsText(dir / "max_link_speed");
    if (!speed_text || !max_text) continue;
    const double speed = ParseLinkSpeed(*speed_text);
    const double max_speed = ParseLinkSpeed(*max_text);
    if (speed <= 0 || max_speed <= 0) continue;
    std::string value = Trimmed(*speed_text);
    std::string expected = Trimmed(*max_text);
    CheckFinding f;
    f.status = speed < max_speed ? CheckStatus::kFail : CheckStatus::kOk;
    f.fields = {{"device", d.address},
                {"counter", "pcie_speed"},
                {"value", value.substr(0, value.find(" PCIe"))},
                {"expected", expected.substr(0, expected.find(" PCIe"))},
                {"role", d.role}};
    f.message = "PCIe link trained at ";
    f.message += value;
    f.message += " of ";
    f.message += expected;
    out.push_back(std::move(f));
  }
  AppendNodeSummaries(out, kLinkCounters, "devices");
  return out;
}

std::vector<CheckFinding> AerCheck::Run(std::stop_token /*stop*/) {
  std::vector<CheckFinding> out;
  const fs::path devices = fs::path(sysfs_root_) / "bus" / "pci" / "devices";
  static constexpr std::pair<const char*, const char*> kCounters[] = {
      {"aer_dev_fatal", "TOTAL_ERR_FATAL"}, {"aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"}};
  for (const PciDevice& d : ListAcceleratorsAndNics(sysfs_root_, kinds_)) {
    for (const auto& [file, key] : kCounters) {
      const auto text = ReadSysfsText(devices / d.address / file);
      if (!text) continue;
      const long long total = AerTotal(*text, key);
      if (total < 0) continue;
      const std::string counter =
          std::string(file) == "aer_dev_fatal" ? "aer_fatal" : "aer_nonfatal";
      auto [it, first] =
          baseline_.try_emplace(d.address + " " + counter, static_cast<unsigned long long>(total));
      const unsigned long long base = it->second;
      CheckFinding f;
      f.status =
          static_cast<unsigned long long>(total) > base ? CheckStatus::kFail : CheckStatus::kOk;
      f.fields = {{"device", d.address},
                  {"counter", counter},
                  {"value", std::to_string(total)},
                  {"expected", std::to_string(base)},
                  {"role", d.role}};
      f.message = f.status == CheckStatus::kFail
                      ? std::to_string(static_cast<unsigned long long>(total) - base) + " new " +
                            (counter == "aer_fatal" ? "fatal" : "non-fatal") +
                            " PCIe errors since the agent started"
                      : "no new PCIe errors";
      out.push_back(std::move(f));
    }
  }
  AppendNodeSummaries(out, kAerCounters, "devices");
  return out;
}

}  // namespace faultline
