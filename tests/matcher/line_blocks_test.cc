// SPDX-License-Identifier: Apache-2.0
// LineBlockReader: a stream in blocks of whole lines, none cut, none lost.
#include "matcher/line_blocks.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

// The blocks LineBlockReader gives for `text`, read from a file.
std::vector<std::string> Blocks(const std::string& text, std::size_t block_bytes) {
  TempDir dir;
  const std::string path = dir.Write("in.log", text);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  LineBlockReader reader(fd, block_bytes);
  std::vector<std::string> out;
  for (;;) {
    Result<std::optional<std::string_view>> block = reader.Next();
    REQUIRE(block.ok());
    if (!*block) break;
    out.emplace_back(**block);
  }
  close(fd);
  return out;
}

TEST_CASE("a stream in blocks: whole lines, in order, the last one without its newline kept") {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i) + "\n";
  text += std::string(300000, 'x') + "\n";  // a line longer than a block
  for (int i = 0; i < 100; ++i) text += "after " + std::to_string(i) + "\n";
  text += "no newline at the end";
  for (std::size_t block : {std::size_t{16}, std::size_t{4096}, std::size_t{1} << 20}) {
    const std::vector<std::string> blocks = Blocks(text, block);
    std::string joined;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      CHECK_FALSE(blocks[i].empty());
      if (i + 1 < blocks.size()) CHECK(blocks[i].back() == '\n');  // no line cut
      joined += blocks[i];
    }
    CHECK(joined == text);
    if (block < text.size()) CHECK(blocks.size() > 1);
  }
  CHECK(Blocks("", 16).empty());
  CHECK(Blocks("one\n", 16) == std::vector<std::string>{"one\n"});
}

}  // namespace
}  // namespace faultline
