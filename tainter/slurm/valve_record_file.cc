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

// flock(2) on PATH.lock, released (and closed) on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      error_ = std::strerror(errno);
      return;
    }
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        error_ = std::strerror(errno);
        return;
      }
    }
    locked_ = true;
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
  std::string error_;
};

// The record as the file holds it: "VERSION\nVALUE". A missing file is no record.
Result<SharedRecord> ReadRecord(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return SharedRecord{};
    return UnavailableError("cannot read the valve record " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::size_t nl = all.find('\n');
  if (nl == std::string::npos || nl == 0) {
    return UnavailableError("the valve record " + path + " is not 'VERSION\\nVALUE'");
  }
  return SharedRecord{all.substr(nl + 1), all.substr(0, nl)};
}

}  // namespace

Result<SharedRecord> ValveRecordFile::Get() const {
  FileLock lock(path_);
  if (!lock.locked()) return UnavailableError("cannot lock " + path_ + ".lock: " + lock.error());
  return ReadRecord(path_);
}

Status ValveRecordFile::Put(const std::string& value, const std::string& expected_version) const {
  FileLock lock(path_);
  if (!lock.locked()) return UnavailableError("cannot lock " + path_ + ".lock: " + lock.error());
  Result<SharedRecord> now = ReadRecord(path_);
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
  const long long next = current + 1;
  // Written beside it and renamed over it: a reader never sees half a record.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << next << '\n' << value;
    out.flush();
    if (!out) return UnavailableError("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    return UnavailableError("cannot replace " + path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace faultline
