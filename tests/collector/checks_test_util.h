// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/log_record.h"
#include "collector/checks/check_source.h"

namespace faultline {

// Reads from `source` until `want` records arrived or `timeout` passed
// (Read blocks until it has records, so a timer thread stops it).
inline std::vector<LogRecord> ReadChecks(CheckSource& source, std::size_t want,
                                         std::chrono::milliseconds timeout) {
  std::vector<LogRecord> out;
  std::stop_source stop;
  const auto until = std::chrono::steady_clock::now() + timeout;
  std::jthread timer([&stop, until](std::stop_token cancelled) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    if (!cv.wait_until(lock, cancelled, until, [] { return false; })) stop.request_stop();
  });
  while (out.size() < want && !stop.stop_requested()) {
    (void)source.Read(out, want - out.size(), stop.get_token());
  }
  return out;
}

// A sysfs PCI device directory: <root>/bus/pci/devices/<address>/{vendor,class}.
inline void AddPciDevice(const std::filesystem::path& root, const std::string& address,
                         const std::string& vendor, const std::string& pci_class) {
  const std::filesystem::path dir = root / "bus" / "pci" / "devices" / address;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "vendor") << vendor << "\n";
  std::ofstream(dir / "class") << pci_class << "\n";
}

}  // namespace faultline
