// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/kmsg_device.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace faultline {
namespace {

constexpr std::size_t kBufferSize = 16UL * 1024;

std::string Errno(const char* what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

class FdKmsgDevice final : public KmsgDevice {
 public:
  FdKmsgDevice(int fd, std::string path, bool pollable)
      : fd_(fd), path_(std::move(path)), pollable_(pollable), buffer_(kBufferSize, '\0') {}
  ~FdKmsgDevice() override { ::close(fd_); }

  Status Rewind() override {
    if (::lseek(fd_, 0, SEEK_SET) < 0) return UnavailableError(Errno("lseek SEEK_SET", path_));
    return OkStatus();
  }

  Status SeekToEnd() override {
    if (::lseek(fd_, 0, SEEK_END) < 0) return UnavailableError(Errno("lseek SEEK_END", path_));
    return OkStatus();
  }

  Result<ReadOutcome> ReadRecord(std::string& record) override {
    for (;;) {
      ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n > 0) {
        record.assign(buffer_.data(), static_cast<std::size_t>(n));
        return ReadOutcome::kRecord;
      }
      // 0 only happens on stand-ins (a FIFO without writer, a regular file).
      if (n == 0) return ReadOutcome::kAgain;
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return ReadOutcome::kAgain;
      // errno is positive: fluent-bit's `errno == -EPIPE` never matched.
      if (errno == EPIPE) return ReadOutcome::kOverrun;
      return UnavailableError(Errno("read", path_));
    }
  }

  Result<WaitOutcome> Wait(const StopWakeup& wakeup, std::stop_token stop,
                           std::chrono::milliseconds timeout) override {
    // A regular file is always "readable" to poll(2); waiting on it would
    // spin, so stand-ins of that kind are re-read every 100 ms instead.
    if (!pollable_) {
      if (timeout.count() < 0 || timeout > std::chrono::milliseconds(100)) {
        timeout = std::chrono::milliseconds(100);
      }
      Result<WaitOutcome> w = WaitReadable(-1, wakeup, stop, timeout);
      if (w.ok() && *w == WaitOutcome::kTimeout) return WaitOutcome::kReady;
      return w;
    }
    return WaitReadable(fd_, wakeup, stop, timeout);
  }

 private:
  const int fd_;
  const std::string path_;
  const bool pollable_;
  std::string buffer_;
};

}  // namespace

Result<std::unique_ptr<KmsgDevice>> OpenKmsgDevice(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(Errno("open", path));
    if (errno == EACCES || errno == EPERM) return PermissionDeniedError(Errno("open", path));
    return UnavailableError(Errno("open", path));
  }
  struct stat st {};
  bool pollable = ::fstat(fd, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
  return std::unique_ptr<KmsgDevice>(std::make_unique<FdKmsgDevice>(fd, path, pollable));
}

}  // namespace faultline
