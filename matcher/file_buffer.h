// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

// The whole content of a file (mapped, when it is a regular file) or of
// stdin ("-", read in 1 MiB blocks). Move-only; unmaps on destruction.
//
// A mapped file that shrinks while it is read (logrotate's copytruncate
// does that to a live log) would kill the process with SIGBUS at the first
// page past its new end. A SIGBUS handler maps zeros over the mapping from
// that page on, so the read goes on, and shrunk_to() tells the caller.
class FileBuffer {
 public:
  static Result<FileBuffer> Open(const std::string& path);
  FileBuffer(FileBuffer&& other) noexcept;
  FileBuffer& operator=(FileBuffer&&) = delete;
  FileBuffer(const FileBuffer&) = delete;
  ~FileBuffer();

  std::string_view text() const { return text_; }

  // Where a read past the file's new end was caught: the offset of the
  // first page that was gone when it was read (at or past the new end).
  // text() reads zeros from there on.
  std::optional<std::size_t> shrunk_to() const;

 private:
  FileBuffer() = default;
  std::string owned_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  int guard_ = -1;  // the slot guarding the mapping, or -1
  std::string_view text_;
};

}  // namespace faultline
