// SPDX-License-Identifier: Apache-2.0
// A stream that cannot be mapped (stdin, a pipe, `<(journalctl ...)`) read
// in blocks of whole lines, so that `faultline scan -` holds one block, not
// the whole stream: `journalctl -o json | faultline scan -` over a week of
// a node's journal was gigabytes of memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

class LineBlockReader {
 public:
  // Blocks of about `block_bytes`: a line longer than that makes its block
  // longer; none is cut.
  explicit LineBlockReader(int fd, std::size_t block_bytes = std::size_t{64} << 20)
      : fd_(fd), block_bytes_(block_bytes) {}

  // The next block of whole lines (the last one may end without a newline),
  // valid until the next call; nullopt at the end of the stream.
  Result<std::optional<std::string_view>> Next();

 private:
  int fd_;
  std::size_t block_bytes_;
  std::string buffer_;
  std::size_t handed_ = 0;  // bytes of buffer_ the last block held
  bool eof_ = false;
};

}  // namespace faultline
