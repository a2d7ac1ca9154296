// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

// The whole content of a file (mapped, when it is a regular file) or of
// stdin ("-", read in 1 MiB blocks). Move-only; unmaps on destruction.
class FileBuffer {
 public:
  static Result<FileBuffer> Open(const std::string& path);
  FileBuffer(FileBuffer&& other) noexcept;
  FileBuffer& operator=(FileBuffer&&) = delete;
  FileBuffer(const FileBuffer&) = delete;
  ~FileBuffer();

  std::string_view text() const { return text_; }

 private:
  FileBuffer() = default;
  std::string owned_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::string_view text_;
};

}  // namespace faultline
