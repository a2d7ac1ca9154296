// SPDX-License-Identifier: Apache-2.0
#include "matcher/file_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace faultline {
namespace {

Status ReadAll(int fd, std::string& out) {
  constexpr std::size_t kBlock = 1 << 20;
  while (true) {
    std::size_t old = out.size();
    out.resize(old + kBlock);
    ssize_t n = read(fd, out.data() + old, kBlock);
    if (n < 0) {
      if (errno == EINTR) {
        out.resize(old);
        continue;
      }
      out.resize(old);
      return DataLossError(std::strerror(errno));
    }
    out.resize(old + static_cast<std::size_t>(n));
    if (n == 0) return OkStatus();
  }
}

}  // namespace

FileBuffer::FileBuffer(FileBuffer&& other) noexcept
    : owned_(std::move(other.owned_)), map_(other.map_), map_size_(other.map_size_) {
  text_ =
      map_ ? std::string_view(static_cast<const char*>(map_), map_size_) : std::string_view(owned_);
  other.map_ = nullptr;
  other.map_size_ = 0;
  other.text_ = {};
}

FileBuffer::~FileBuffer() {
  if (map_) munmap(map_, map_size_);
}

Result<FileBuffer> FileBuffer::Open(const std::string& path) {
  FileBuffer b;
  if (path == "-") {
    Status st = ReadAll(STDIN_FILENO, b.owned_);
    if (!st.ok()) return st;
    b.text_ = b.owned_;
    return b;
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFoundError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void* m = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      // One sequential pass: ask for aggressive read-ahead.
      madvise(m, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
      madvise(m, static_cast<std::size_t>(st.st_size), MADV_WILLNEED);
      close(fd);
      b.map_ = m;
      b.map_size_ = static_cast<std::size_t>(st.st_size);
      b.text_ = std::string_view(static_cast<const char*>(m), b.map_size_);
      return b;
    }
  }
  Status rs = ReadAll(fd, b.owned_);
  close(fd);
  if (!rs.ok()) return DataLossError(path + ": " + rs.message());
  b.text_ = b.owned_;
  return b;
}

}  // namespace faultline
