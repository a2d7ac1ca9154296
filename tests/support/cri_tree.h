// SPDX-License-Identifier: Apache-2.0
#pragma once

// Builds /var/log/pods-style trees of CRI container logs and rotates them the
// way kubelet does (TESTING-NOTES §5), for podlog tests. Modelled on the
// team's gencri.py: both runtimes' timestamp styles, P...F splits, kubelet
// rotation with the write-after-rename race, gzip of older rotated files.

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

enum class CriStyle {
  kContainerd,  // Go RFC3339Nano: trailing zeros trimmed, "Z"
  kCrio,        // conmon: 9 fractional digits, "+00:00"
};

// Formats `t` (UTC) as the runtime would.
inline std::string CriTimestamp(std::chrono::system_clock::time_point t, CriStyle style) {
  const auto ns_total =
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const time_t secs = static_cast<time_t>(ns_total / 1'000'000'000);
  const long ns = static_cast<long>(ns_total % 1'000'000'000);  // NOLINT(google-runtime-int)
  tm parts{};
  gmtime_r(&secs, &parts);
  char head[32];
  strftime(head, sizeof(head), "%Y-%m-%dT%H:%M:%S", &parts);
  char frac[16];
  snprintf(frac, sizeof(frac), "%09ld", ns);
  std::string f = frac;
  if (style == CriStyle::kCrio) return std::string(head) + "." + f + "+00:00";
  while (!f.empty() && f.back() == '0') f.pop_back();
  return std::string(head) + (f.empty() ? "" : "." + f) + "Z";
}

// One line of application output as the runtime writes it: split into P
// chunks of at most `max_chunk` bytes ending with an F chunk.
inline std::string CriLines(
    std::string_view stream, std::string_view message, CriStyle style,
    std::size_t max_chunk = 16384,
    std::chrono::system_clock::time_point t = std::chrono::system_clock::now()) {
  std::string out;
  const std::string ts = CriTimestamp(t, style);
  std::size_t pos = 0;
  do {
    const std::string_view chunk = message.substr(pos, max_chunk);
    pos += chunk.size();
    const bool last = pos >= message.size();
    out += ts + " " + std::string(stream) + (last ? " F " : " P ") + std::string(chunk) + "\n";
  } while (pos < message.size());
  return out;
}

// A container's log directory with the runtime's open file, as containerd
// keeps it: O_APPEND on <restart>.log, reopened after kubelet's rotation.
class CriContainerLog {
 public:
  explicit CriContainerLog(std::filesystem::path dir, int restart = 0)
      : dir_(std::move(dir)), log_(dir_ / (std::to_string(restart) + ".log")) {
    std::filesystem::create_directories(dir_);
    Reopen();
  }
  ~CriContainerLog() {
    if (fd_ >= 0) ::close(fd_);
  }
  CriContainerLog(const CriContainerLog&) = delete;
  CriContainerLog& operator=(const CriContainerLog&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& log() const { return log_; }

  // Appends raw bytes through the runtime's descriptor.
  void WriteRaw(std::string_view bytes) {
    [[maybe_unused]] ssize_t n = ::write(fd_, bytes.data(), bytes.size());
  }
  void Write(std::string_view stream, std::string_view message,
             CriStyle style = CriStyle::kContainerd, std::size_t max_chunk = 16384) {
    WriteRaw(CriLines(stream, message, style, max_chunk));
  }

  // kubelet's rotateLog(): delete *.tmp, keep at most max_files-2 rotated
  // files (oldest first), gzip the remaining uncompressed rotated files,
  // rename <n>.log to <n>.log.<stamp>; then `race` (if any) is written
  // through the old descriptor, as the runtime does until ReopenContainerLog;
  // then the runtime reopens <n>.log. `stamp` is "YYYYMMDD-hhmmss" and must
  // increase between calls.
  void Rotate(const std::string& stamp, std::string_view race = {}, int max_files = 5) {
    namespace fs = std::filesystem;
    const std::string prefix = log_.filename().string() + ".";
    std::vector<fs::path> rotated;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n.rfind(prefix, 0) != 0) continue;
      if (n.size() > 4 && n.substr(n.size() - 4) == ".tmp") {
        fs::remove(e.path());
        continue;
      }
      rotated.push_back(e.path());
    }
    std::sort(rotated.begin(), rotated.end());
    while (static_cast<int>(rotated.size()) > max_files - 2) {
      fs::remove(rotated.front());
      rotated.erase(rotated.begin());
    }
    for (const fs::path& p : rotated) {
      if (p.extension() == ".gz") continue;
      Gzip(p);
    }
    fs::rename(log_, log_.string() + "." + stamp);
    if (!race.empty()) WriteRaw(race);
    Reopen();
  }

 private:
  void Reopen() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open(log_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  }
  static void Gzip(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string tmp = p.string() + ".gz.tmp";
    gzFile gz = gzopen(tmp.c_str(), "wb");
    gzwrite(gz, data.data(), static_cast<unsigned>(data.size()));
    gzclose(gz);
    std::filesystem::rename(tmp, p.string() + ".gz");
    std::filesystem::remove(p);
  }

  std::filesystem::path dir_;
  std::filesystem::path log_;
  int fd_ = -1;
};

// <root>/<ns>_<pod>_<uid>/<container>/
inline std::filesystem::path PodLogDir(const std::filesystem::path& root, std::string_view ns,
                                       std::string_view pod, std::string_view uid,
                                       std::string_view container) {
  return root / (std::string(ns) + "_" + std::string(pod) + "_" + std::string(uid)) /
         std::string(container);
}

}  // namespace faultline
