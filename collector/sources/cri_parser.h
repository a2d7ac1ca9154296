// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/cri_line.h"

namespace faultline {

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
  // std::array, not a C array: clang-tidy 14 reports the index variable of
  // a C array member's implicit copy (`__i0`) as a reserved identifier.
  std::array<std::optional<JoinedLine>, 2> pending_;
  std::uint64_t truncated_ = 0;
};

}  // namespace faultline
