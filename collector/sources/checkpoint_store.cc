// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faultline {
namespace {

constexpr std::string_view kMagic = "faultline-checkpoint v1";

// FNV-1a: detects torn or hand-edited files; not a security measure.
std::string Checksum(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Status WriteAll(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return UnavailableError(std::string("write: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  return OkStatus();
}

}  // namespace

CheckpointStore::CheckpointStore(std::string directory, const std::string& name)
    : directory_(std::move(directory)) {
  if (!directory_.empty()) path_ = directory_ + "/" + name + ".checkpoint";
}

Result<std::optional<std::string>> CheckpointStore::Load() const {
  if (path_.empty()) return std::optional<std::string>();
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<std::string>();
    return UnavailableError("cannot read " + path_ + ": " + std::strerror(errno));
  }
  std::string magic, sum;
  std::getline(in, magic);
  std::getline(in, sum);
  std::ostringstream rest;
  rest << in.rdbuf();
  std::string content = rest.str();
  if (magic != kMagic) return DataLossError(path_ + " is not a faultline checkpoint");
  if (sum != Checksum(content)) return DataLossError(path_ + " is corrupt (checksum mismatch)");
  return std::optional<std::string>(std::move(content));
}

Status CheckpointStore::Save(std::string_view content) {
  if (path_.empty()) return OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return UnavailableError("cannot create " + directory_ + ": " + ec.message());
  const std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return UnavailableError("cannot write " + tmp + ": " + std::strerror(errno));
  std::string framed = std::string(kMagic) + "\n" + Checksum(content) + "\n";
  framed.append(content);
  Status s = WriteAll(fd, framed);
  if (s.ok() && ::fsync(fd) != 0) {
    s = UnavailableError(std::string("fsync: ") + std::strerror(errno));
  }
  ::close(fd);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return UnavailableError("cannot rename " + tmp + ": " + std::strerror(err));
  }
  // The rename is durable only once the directory entry is.
  int dir = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return OkStatus();
}

}  // namespace faultline
