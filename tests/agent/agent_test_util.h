// SPDX-License-Identifier: Apache-2.0
// Helpers for the agent's tests: a small rule pack and bounded waits.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "matcher/rule_set.h"

namespace faultline {

// One taint rule keyed by the PCI address, one ignore rule.
inline constexpr const char* kTestPack = R"(pack: agent-test
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: test.xid
    pattern: 'NVRM: Xid \((?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+)'
    severity: critical
    action: taint
    summary: 'Xid {xid} on {pci}'
  - id: test.noise
    pattern: 'harmless noise'
    severity: info
    action: ignore
)";

inline std::shared_ptr<const RuleSet> CompileTestPack(const char* text = kTestPack) {
  Diagnostics diags;
  return RuleSet::Compile(LoadRulePack(text, "agent-test.yaml", diags), {}, diags);
}

inline std::string XidLine(int pci, int xid = 79) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "NVRM: Xid (0000:%02x:00): %d, pid=1", pci, xid);
  return buf;
}

// Polls `done` until it holds or `timeout` passes; the result says which.
// (The pipeline's threads offer nothing to wait on from outside.)
inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace faultline
