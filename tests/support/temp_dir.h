// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace faultline {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it
// when the object goes out of scope. Tests keep their files here.
class TempDir {
 public:
  TempDir() {
    const char* base =
        getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): tests are single-threaded here
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/faultline-test-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    path_ = made ? std::filesystem::path(made) : std::filesystem::path();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string operator/(std::string_view name) const { return (path_ / name).string(); }

  // Writes `content` to `name` (creating parent directories); returns the path.
  std::string Write(std::string_view name, std::string_view content) const {
    std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

inline std::string ReadFileForTest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace faultline
