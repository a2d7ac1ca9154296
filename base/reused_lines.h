// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// Lists of lines refilled once per event by a reader of many events (the
// tainter's consumers read each event's evidence into the last one's list,
// its policy copies them into a decision it keeps): the lines a list gives
// up are kept, per thread, for their buffers and handed to the next list
// that grows. The agent attaches evidence to every other event of a node
// with a fault (the tainting ones), so a list alone would free and allocate
// its lines every other event. At most kSpareLines are kept.
inline constexpr std::size_t kSpareLines = 16;

// `lines` cut to its first `n`; the rest are kept as spare buffers.
void KeepLines(std::vector<std::string>& lines, std::size_t n);
// Appends `line` to `lines`, in a spare buffer when there is one.
void AddLine(std::vector<std::string>& lines, std::string_view line);
// `to` = `from`, in `to`'s buffers and spare ones.
void AssignLines(std::vector<std::string>& to, const std::vector<std::string>& from);

}  // namespace faultline
