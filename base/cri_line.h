// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace faultline {

// The two streams the container runtime interleaves in one log file.
enum class CriStream : std::uint8_t { kStdout, kStderr };

std::string_view CriStreamName(CriStream stream);  // "stdout" | "stderr"

// One line of a CRI container log file, as containerd and CRI-O write it:
//
//   2026-11-22T07:02:53.17905Z stdout F CUDA error: an illegal memory access
//   2026-11-22T07:02:53.178710000+00:00 stderr P first 8 KiB of a long line
//   |                                   |      | |
//   |                                   |      | content (may be empty)
//   |                                   |      tag: F (full) or P (partial); later
//   |                                   |      runtimes may add ":"-separated parts,
//   |                                   |      of which only the first is read
//   |                                   stdout | stderr
//   RFC 3339: containerd trims trailing zeros and writes Z; CRI-O always
//   writes 9 digits and a numeric offset
struct CriLine {
  std::chrono::system_clock::time_point time;
  CriStream stream = CriStream::kStdout;
  bool partial = false;      // tag P: the content continues in the next line of this stream
  std::string_view content;  // points into the input
};

// The one CRI line parser: the podlog source and `faultline scan` both read
// pod logs through it. Pure: no I/O, no allocation. `line` is one line
// without its '\n'. nullopt if it is not a CRI line (bad timestamp, stream or
// tag).
std::optional<CriLine> ParseCriLine(std::string_view line);

}  // namespace faultline
