// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into PodLogSource: not part of the source's interface.
#pragma once

#include <atomic>
#include <cstddef>

#include "collector/sources/podlog_source.h"

namespace faultline {

struct PodLogSourceTesting {
  // Files being tailed now.
  static std::size_t TrackedFiles(const PodLogSource& source) {
    return source.tracked_.load(std::memory_order_relaxed);
  }
};

}  // namespace faultline
