// SPDX-License-Identifier: Apache-2.0
// Counting the newlines of a buffer, for line numbers: every byte of a
// scanned buffer passes through it, so it is vectorised (AVX2 where the CPU
// has it, SSE2 or eight bytes at a time elsewhere).
#pragma once

#include <cstdint>

namespace faultline {

// The number of '\n' bytes in [p, end).
std::uint64_t CountNewlines(const char* p, const char* end);

}  // namespace faultline
