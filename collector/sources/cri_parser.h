// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

// Pure: no I/O, no allocation. `line` is one line without its '\n'.
// nullopt if it is not a CRI line (bad timestamp, stream or tag).
std::optional<CriLine> ParseCriLine(std::string_view line);

// A logical line rebuilt from a P... F sequence of one stream.
struct JoinedLine {
  std::chrono::system_clock::time_point time;  // of the first chunk
  CriStream stream = CriStream::kStdout;
  std::string text;
  bool truncated = false;  // longer than the cap; the rest was dropped
};

// Joins partial (P) chunks of each stream up to the final (F) chunk, as
// kubelet does when it serves `kubectl logs`. stdout and stderr are joined
// independently because the runtime interleaves them line by line.
//
// The joined text is capped at `max_bytes`; what is beyond it is dropped and
// the line is marked truncated (and counted in truncated()), so that a
// container writing without newlines cannot make the agent grow unbounded.
//
// Pure and single-threaded: one joiner per file.
class PartialLineJoiner {
 public:
  explicit PartialLineJoiner(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // Feeds one parsed line. Returns the complete logical line when `line` is
  // an F chunk (joined with any pending P chunks of its stream); nullopt
  // after a P chunk.
  std::optional<JoinedLine> Add(const CriLine& line);

  bool has_pending(CriStream stream) const { return pending_[Index(stream)].has_value(); }

  // Returns and clears what is pending on `stream`: output a container wrote
  // without a final newline before it exited ends in a P chunk.
  std::optional<JoinedLine> Flush(CriStream stream);

  std::uint64_t truncated() const { return truncated_; }

 private:
  static std::size_t Index(CriStream s) { return s == CriStream::kStdout ? 0 : 1; }
  void Append(JoinedLine& line, std::string_view content);

  std::size_t max_bytes_;
  std::optional<JoinedLine> pending_[2];
  std::uint64_t truncated_ = 0;
};

}  // namespace faultline
