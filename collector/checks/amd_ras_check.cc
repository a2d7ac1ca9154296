// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/amd_ras_check.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

#include "collector/checks/gpu_inventory_check.h"
#include "collector/checks/pci_devices.h"
#include "collector/checks/sysfs_read.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSuffix = "_err_count";

// "<key>: <n>" at the start of `text`; advances past its line.
std::optional<unsigned long long> TakeCount(std::string_view& text, std::string_view key) {
  if (text.substr(0, key.size()) != key || text.substr(key.size(), 2) != ": ") return std::nullopt;
  text.remove_prefix(key.size() + 2);
  unsigned long long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  if (!text.empty() && text.front() != '\n') return std::nullopt;
  if (!text.empty()) text.remove_prefix(1);
  return n;
}

}  // namespace

std::optional<RasCounts> ParseRasErrCount(std::string_view text) {
  RasCounts c;
  const auto ue = TakeCount(text, "ue");
  const auto ce = ue ? TakeCount(text, "ce") : std::nullopt;
  if (!ue || !ce) return std::nullopt;
  c.ue = *ue;
  c.ce = *ce;
  if (!text.empty()) {
    c.de = TakeCount(text, "de");
    if (!c.de || !text.empty()) return std::nullopt;
  }
  return c;
}

std::vector<CheckFinding> AmdRasCheck::Run(std::stop_token stop) {
  std::vector<CheckFinding> out;
  const std::vector<AcceleratorKind> amd = {*BuiltinAcceleratorKind("amd")};
  for (const PciDevice& d : ListAcceleratorsAndNics(sysfs_root_, amd)) {
    if (d.role != "amd" || stop.stop_requested()) continue;
    const fs::path ras = fs::path(sysfs_root_) / "bus" / "pci" / "devices" / d.address / "ras";
    std::error_code ec;
    std::vector<std::string> blocks;
    for (const fs::directory_entry& e : fs::directory_iterator(ras, ec)) {
      const std::string file = e.path().filename().string();
      if (file.size() > kSuffix.size() &&
          file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
        blocks.push_back(file.substr(0, file.size() - kSuffix.size()));
      }
    }
    std::sort(blocks.begin(), blocks.end());
    for (const std::string& block : blocks) {
      const auto text = ReadSysfsText(ras / (block + std::string(kSuffix)));
      const std::optional<RasCounts> counts = text ? ParseRasErrCount(*text) : std::nullopt;
      if (!counts) continue;
      const auto finding = [&](const std::string& kind, unsigned long long v, bool level) {
        std::string counter = block;
        counter += '_';
        counter += kind;
        std::string key = d.address;
        key += ' ';
        key += counter;
        auto it = previous_.try_emplace(std::move(key), v).first;
        const unsigned long long before = level ? 0 : std::min(it->second, v);
        it->second = v;
        CheckFinding f;
        f.status = v > before ? CheckStatus::kFail : CheckStatus::kOk;
        f.fields = {{"device", d.address},
                    {"counter", counter},
                    {"value", std::to_string(v)},
                    {"expected", std::to_string(before)},
                    {"block", block}};
        if (level) {
          f.message =
              std::to_string(v) + " uncorrectable " + block + " errors since the driver loaded";
        } else {
          f.message = v > before ? std::to_string(v - before) + " new " +
                                       (kind == "ce" ? "correctable " : "deferred ") + block +
                                       " errors since the previous run"
                                 : "no new " + block + " errors";
        }
        out.push_back(std::move(f));
      };
      finding("ue", counts->ue, /*level=*/true);
      finding("ce", counts->ce, /*level=*/false);
      if (counts->de) finding("de", *counts->de, /*level=*/false);
    }
  }
  return out;
}

}  // namespace faultline
