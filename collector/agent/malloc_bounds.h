// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace faultline {

// Bounds glibc malloc's retained memory for a long-running agent; call first
// thing in main, before any thread starts. Measured with bench/agent_rate.sh
// and bench/agent_flood.sh (bench/README.md, "Agent memory"):
//  - at most 2 arenas (glibc: 8 per core): each thread that allocates
//    (readers, the match thread, librdkafka's threads) otherwise gets an
//    arena of its own whose freed memory stays resident;
//  - a fixed 128 KiB mmap threshold: glibc raises the threshold to the size
//    of each large block freed (up to 32 MiB), after which big short-lived
//    buffers (read chunks, batch vectors) come from the heap and leave it
//    fragmented; fixing it also fixes the trim threshold (256 KiB), so
//    free memory at the heap's top goes back to the system.
// The agent's VmHWM at 10,000 lines/s went from 43 to 33 MiB with this.
// Left alone when the operator set MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_
// or GLIBC_TUNABLES: their setting wins.
void BoundMallocFootprint();

// Gives the pages of freed heap memory back to the system (malloc_trim):
// called once the agent is assembled, because compiling the rules (the
// YAML parse above all) frees megabytes that would otherwise stay resident
// until reused.
void ReleaseFreedMemory();

}  // namespace faultline
