// SPDX-License-Identifier: Apache-2.0
#include "matcher/line_blocks.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace faultline {

Result<std::optional<std::string_view>> LineBlockReader::Next() {
  buffer_.erase(0, handed_);  // the start of a line the last block did not end
  handed_ = 0;
  constexpr std::size_t kRead = std::size_t{1} << 20;
  // Room for a block and one read: growing by doubling would take twice.
  if (buffer_.capacity() < block_bytes_ + kRead) buffer_.reserve(block_bytes_ + kRead);
  while (!eof_) {
    if (buffer_.size() >= block_bytes_) {
      const std::size_t nl = buffer_.rfind('\n');
      if (nl != std::string::npos) {
        handed_ = nl + 1;
        return std::optional<std::string_view>(std::string_view(buffer_).substr(0, handed_));
      }
      // One line longer than a block: read on to its end.
    }
    const std::size_t had = buffer_.size();
    buffer_.resize(had + kRead);
    ssize_t n;
    do {
      n = read(fd_, buffer_.data() + had, kRead);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      buffer_.resize(had);
      return DataLossError(std::string("read: ") + std::strerror(errno));
    }
    buffer_.resize(had + static_cast<std::size_t>(n));
    eof_ = n == 0;
  }
  if (buffer_.empty()) return std::optional<std::string_view>();
  handed_ = buffer_.size();
  return std::optional<std::string_view>(std::string_view(buffer_));
}

}  // namespace faultline
