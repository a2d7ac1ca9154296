// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <stop_token>
#include <string>

#include "base/status.h"

namespace faultline {

// An eventfd that a std::stop_callback writes, so that a thread blocked in
// poll(2) on its data fd wakes up as soon as another thread requests a stop.
// This is how every Source honours the `stop` of Source::Read().
//
// Usage, in a Source that owns one StopWakeup:
//
//   Result<WaitOutcome> w = WaitReadable(fd_, wakeup_, stop, std::chrono::seconds(1));
//   if (!w.ok()) return w.error();                       // poll failed (kUnavailable)
//   if (*w == WaitOutcome::kStopped) return OkStatus();  // stop requested
//
// Thread-safety: Notify() may be called from any thread (that is its point);
// everything else belongs to the owner's thread. The eventfd is closed by the
// destructor. Not copyable or movable (a stop_callback may hold a pointer).
class StopWakeup {
 public:
  StopWakeup() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), errno_(fd_ < 0 ? errno : 0) {}
  ~StopWakeup() {
    if (fd_ >= 0) ::close(fd_);
  }
  StopWakeup(const StopWakeup&) = delete;
  StopWakeup& operator=(const StopWakeup&) = delete;

  // kResourceExhausted if the eventfd could not be created (out of fds).
  // Factories check this once and refuse to build the source otherwise.
  Status status() const {
    if (fd_ >= 0) return OkStatus();
    return ResourceExhaustedError(std::string("eventfd: ") + std::strerror(errno_));
  }

  int fd() const { return fd_; }

  // Async-signal-safe and thread-safe: one write(2).
  void Notify() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof(one));
  }

  // Resets the eventfd so the next wait blocks again (after a stop was
  // handled and the owner is later called with a fresh stop_token).
  void Clear() const {
    std::uint64_t value = 0;
    [[maybe_unused]] ssize_t n = ::read(fd_, &value, sizeof(value));
  }

 private:
  int fd_;
  int errno_;
};

enum class WaitOutcome {
  kReady,    // `fd` has one of `events` (or POLLERR/POLLHUP/POLLNVAL: read it to learn why)
  kStopped,  // `stop` was requested (checked first: a stop wins over ready data)
  kTimeout,  // `timeout` passed
};

// Blocks until `fd` is ready for `events`, `stop` is requested, or `timeout`
// passes, whichever comes first. `fd` < 0 waits for stop or timeout only
// (an interruptible sleep, e.g. between two polls of sysfs). A negative
// timeout waits without a time limit (still interruptible by `stop`).
// EINTR is retried with the remaining time.
//
// kUnavailable: poll(2) itself failed (errno in the message).
inline Result<WaitOutcome> WaitReadable(int fd, const StopWakeup& wakeup, std::stop_token stop,
                                        std::chrono::milliseconds timeout,
                                        short events = POLLIN) {  // NOLINT(google-runtime-int)
  if (stop.stop_requested()) return WaitOutcome::kStopped;
  // Registered for the duration of this wait only; runs inline if the stop
  // arrives between the check above and here.
  std::stop_callback on_stop(stop, [&wakeup] { wakeup.Notify(); });
  const bool forever = timeout.count() < 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int wait_ms = -1;
    if (!forever) {
      auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      wait_ms = left.count() < 0 ? 0 : static_cast<int>(left.count());
    }
    pollfd fds[2] = {{fd, events, 0}, {wakeup.fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return UnavailableError(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[1].revents != 0) wakeup.Clear();
    if (stop.stop_requested()) return WaitOutcome::kStopped;
    if (fd >= 0 && fds[0].revents != 0) return WaitOutcome::kReady;
    if (n == 0) return WaitOutcome::kTimeout;
    // Only a stale wakeup from an earlier stop_token: wait again.
  }
}

}  // namespace faultline
