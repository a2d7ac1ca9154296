// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/valve_record_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace faultline {
namespace {

constexpr auto kLockPoll = std::chrono::milliseconds(10);

// flock(fd, op | LOCK_NB) until it succeeds or `wait` passes.
bool LockWithin(int fd, int op, std::chrono::milliseconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (flock(fd, op | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    if (std::chrono::steady_clock::now() >= end) return false;
    usleep(std::chrono::duration_cast<std::chrono::microseconds>(kLockPoll).count());
  }
}

}  // namespace

Status ValveRecordFile::Hold() {
  if (fd_ >= 0) {
    if (std::chrono::steady_clock::now() - held_since_ <= max_hold_) return OkStatus();
    Release();  // held too long (a drain that never came): start afresh
  }
  const int fd = open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return UnavailableError("cannot open " + path_ + ".lock: " + std::strerror(errno));
  if (!LockWithin(fd, LOCK_EX, max_hold_)) {
    const std::string why = errno == EWOULDBLOCK ? "held by another replica" : std::strerror(errno);
    close(fd);
    return UnavailableError("cannot lock " + path_ + ".lock: " + why);
  }
  fd_ = fd;
  held_since_ = std::chrono::steady_clock::now();
  return OkStatus();
}

void ValveRecordFile::Release() {
  if (fd_ < 0) return;
  close(fd_);  // closing releases the lock
  fd_ = -1;
}

bool ValveRecordFile::WaitUnheld(std::chrono::milliseconds wait) const {
  if (fd_ >= 0) return true;  // ours
  const int fd = open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool free = LockWithin(fd, LOCK_SH, wait);
  close(fd);
  return free;
}

// The record as the file holds it: "VERSION\nVALUE". A missing file is no record.
Result<SharedRecord> ValveRecordFile::Read() const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return SharedRecord{};
    return UnavailableError("cannot read the valve record " + path_ + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::size_t nl = all.find('\n');
  if (nl == std::string::npos || nl == 0) {
    return UnavailableError("the valve record " + path_ + " is not 'VERSION\\nVALUE'");
  }
  return SharedRecord{all.substr(nl + 1), all.substr(0, nl)};
}

Result<SharedRecord> ValveRecordFile::Get() {
  FL_RETURN_IF_ERROR(Hold());
  return Read();
}

Status ValveRecordFile::Put(const std::string& value, const std::string& expected_version) {
  FL_RETURN_IF_ERROR(Hold());
  Result<SharedRecord> now = Read();
  if (!now) return now.error();
  if (now->resource_version != expected_version) {
    return AbortedError("the valve record moved (version " + now->resource_version + ", expected " +
                        (expected_version.empty() ? "none" : expected_version) + ")");
  }
  long long current = 0;
  if (!expected_version.empty()) {
    const char* end = expected_version.data() + expected_version.size();
    auto [ptr, ec] = std::from_chars(expected_version.data(), end, current);
    if (ec != std::errc() || ptr != end) {
      return UnavailableError("the valve record " + path_ + " has no numeric version");
    }
  }
  // Written beside it and renamed over it: a reader never sees half a record.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << current + 1 << '\n' << value;
    out.flush();
    if (!out) return UnavailableError("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    return UnavailableError("cannot replace " + path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace faultline
