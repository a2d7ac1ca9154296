// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/malloc_bounds.h"

#include <malloc.h>

#include <cstdlib>

namespace faultline {

void BoundMallocFootprint() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && std::getenv("GLIBC_TUNABLES") == nullptr) {
    mallopt(M_ARENA_MAX, 2);
  }
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr &&
      std::getenv("GLIBC_TUNABLES") == nullptr) {
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  }
}

void ReleaseFreedMemory() { malloc_trim(0); }

}  // namespace faultline
