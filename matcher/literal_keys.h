// SPDX-License-Identifier: Apache-2.0
// Where a prefilter literal is cut for Vectorscan. Its literal matcher
// (FDR or Teddy, under Rose) keys every literal on its last 8 bytes and
// checks the bytes before them only when those occur, so a long literal
// whose last 8 bytes are common in the input (" rpcSendMessage failed with
// status ", "...errors detected in ") costs a check at each occurrence of
// them, and its common bytes weaken FDR's filter for every literal sharing
// its bucket. Any part of a required literal is required too, so a scan
// may search for the literal up to its rarest 8 bytes instead and lose no
// match (bench/README.md, "Figures (2026-11-25: the search keys ...)").
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// The length of the key Vectorscan's literal matcher searches for (Rose's
// ROSE_SHORT_LITERAL_LEN_MAX): longer literals are confirmed after a key hit.
inline constexpr std::size_t kVectorscanKeyBytes = 8;

// Each of `literals` cut after the 8 bytes of it that occur least often in
// `sample` (the first of equally rare ones, so that the cut literal is as
// short as it can be and literals that start alike become one). Literals of
// 8 bytes or fewer, and caseless ones, are returned as they are. Costs one
// pass over `sample` of a few instructions a byte; the result is in the
// order of `literals`, repeats included.
std::vector<RequiredLiteral> CutAtRarestKeys(const std::vector<RequiredLiteral>& literals,
                                             std::string_view sample);

// Teddy, Vectorscan's literal engine for up to 48 literals (FDR past that;
// literal_prefilter.cc), filters each position on the last 4 bytes of its
// literals (nibble masks, one per byte) and checks the rest of a literal
// only where those match: its cost is the number of positions whose 4
// bytes look like some literal's last 4, not the literals' length. The
// rarest 8 bytes of a literal (above) may end in common ones (" failed ",
// "...ing "), each a check somewhere in the text.
inline constexpr std::size_t kTeddyMaxLiterals = 48;
inline constexpr std::size_t kTeddyMaskBytes = 4;

// For a search of at most kTeddyMaxLiterals literals: each of `literals`
// cut to end at the 4 bytes of it that occur least often in `sample`,
// among those ending at its 8th byte or later (the first of equally rare
// ones: the shortest cut). A key of at least 8 bytes is confirmed in one
// compare and reports as few lines as CutAtRarestKeys' would; 4-byte keys
// ended where the sample had none of them, and matched many lines past it
// (bench/README.md). Literals of 8 bytes or fewer, and caseless ones, are
// returned as they are. Same cost and order as CutAtRarestKeys.
std::vector<RequiredLiteral> CutAtRarestEnds(const std::vector<RequiredLiteral>& literals,
                                             std::string_view sample);

}  // namespace faultline
