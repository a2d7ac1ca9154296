// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/sysfs_read.h"

#include <charconv>
#include <fstream>

namespace faultline {

std::optional<std::string> ReadSysfsText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content(std::size_t{64} * 1024, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  if (in.bad()) return std::nullopt;
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

std::optional<std::uint64_t> ParseSysfsNumber(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> ReadSysfsNumber(const std::filesystem::path& path) {
  std::optional<std::string> text = ReadSysfsText(path);
  if (!text) return std::nullopt;
  return ParseSysfsNumber(*text);
}

}  // namespace faultline
