// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "base/fault_event.h"

namespace faultline {

// The fault event the tainter's tests start from, as an agent publishes it
// for a GPU that fell off the bus: Xid 79 read from the kernel log, the
// nvidia.xid rule's critical taint, on `node` with id `id`, logged and
// detected at `at`. A test sets on top what it is about (another rule,
// category, expiry ...), so every event it decides is complete and the
// defaults live here once.
inline FaultEvent SampleEvent(std::string node, std::string id,
                              std::chrono::system_clock::time_point at = {}) {
  FaultEvent e;
  e.id = std::move(id);
  e.node = std::move(node);
  e.source = "kmsg";
  e.origin = Origin::kKernel;
  e.rule = "nvidia.xid";
  e.category = "hardware";
  e.severity = Severity::kCritical;
  e.action = Action::kTaint;
  e.summary = "Xid 79: GPU has fallen off the bus";
  e.message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=0";
  e.log_time = e.detected_time = at;
  return e;
}

}  // namespace faultline
