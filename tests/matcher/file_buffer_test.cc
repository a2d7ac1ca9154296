// SPDX-License-Identifier: Apache-2.0
// The scanned file's buffer: a mapped file that shrinks while it is read
// (logrotate's copytruncate does this to a live log) must not kill the
// scan with SIGBUS; the buffer reads zeros past the new end and says where
// the file was cut.
#include "matcher/file_buffer.h"

#include <unistd.h>

#include <fstream>
#include <numeric>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::string WriteLines(const std::filesystem::path& path, std::size_t bytes) {
  std::string text;
  while (text.size() < bytes) text += "Nov 27 18:00:00 node kernel: a line of a live log\n";
  std::ofstream(path, std::ios::binary) << text;
  return text;
}

// Every byte of the buffer, read: where the file has gone, a read of an
// unguarded mapping raises SIGBUS.
std::size_t Sum(std::string_view text) {
  return std::accumulate(text.begin(), text.end(), std::size_t{0},
                         [](std::size_t s, char c) { return s + static_cast<unsigned char>(c); });
}

TEST_CASE("a mapped file truncated while it is read gives zeros past the cut and says where") {
  TempDir dir;
  const auto path = dir.path() / "syslog";
  const std::string text = WriteLines(path, 4 << 20);
  Result<FileBuffer> buffer = FileBuffer::Open(path.string());
  REQUIRE(buffer.ok());
  REQUIRE(buffer->text().size() == text.size());
  CHECK_FALSE(buffer->shrunk_to().has_value());

  const std::size_t cut = 1 << 20;
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(cut)) == 0);
  const std::size_t sum = Sum(buffer->text());  // without the guard: killed by SIGBUS here
  CHECK(sum == Sum(std::string_view(text).substr(0, cut)));
  REQUIRE(buffer->shrunk_to().has_value());
  // The first page past the cut, or the cut itself when it is on a page's
  // edge: nothing the file still holds is lost.
  CHECK(*buffer->shrunk_to() >= cut);
  CHECK(*buffer->shrunk_to() < cut + static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
}

TEST_CASE("two mapped files, one truncated: the other reads whole and is not marked") {
  TempDir dir;
  const std::string a = WriteLines(dir.path() / "a", 1 << 20);
  const std::string b = WriteLines(dir.path() / "b", 1 << 20);
  Result<FileBuffer> first = FileBuffer::Open((dir.path() / "a").string());
  Result<FileBuffer> second = FileBuffer::Open((dir.path() / "b").string());
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE(truncate((dir.path() / "b").c_str(), 0) == 0);
  CHECK(Sum(second->text()) == 0);
  CHECK(second->shrunk_to() == std::optional<std::size_t>(0));
  CHECK(Sum(first->text()) == Sum(a));
  CHECK_FALSE(first->shrunk_to().has_value());
}

TEST_CASE("stdin and empty files are read, never mapped, and never shrink") {
  TempDir dir;
  std::ofstream(dir.path() / "empty").flush();
  Result<FileBuffer> empty = FileBuffer::Open((dir.path() / "empty").string());
  REQUIRE(empty.ok());
  CHECK(empty->text().empty());
  CHECK_FALSE(empty->shrunk_to().has_value());
}

}  // namespace
}  // namespace faultline
