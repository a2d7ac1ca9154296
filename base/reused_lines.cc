// SPDX-License-Identifier: Apache-2.0
#include "base/reused_lines.h"

#include <algorithm>
#include <utility>

namespace faultline {
namespace {

std::vector<std::string>& SpareLines() {
  thread_local std::vector<std::string> spare;
  return spare;
}

}  // namespace

void KeepLines(std::vector<std::string>& lines, std::size_t n) {
  std::vector<std::string>& spare = SpareLines();
  while (lines.size() > n) {
    if (spare.size() < kSpareLines) spare.push_back(std::move(lines.back()));
    lines.pop_back();
  }
}

void AddLine(std::vector<std::string>& lines, std::string_view line) {
  std::vector<std::string>& spare = SpareLines();
  if (spare.empty()) {
    lines.emplace_back(line);
    return;
  }
  lines.push_back(std::move(spare.back()));
  spare.pop_back();
  lines.back().assign(line);
}

void AssignLines(std::vector<std::string>& to, const std::vector<std::string>& from) {
  if (&to == &from) return;
  const std::size_t common = std::min(to.size(), from.size());
  for (std::size_t i = 0; i < common; ++i) to[i].assign(from[i]);
  KeepLines(to, from.size());
  for (std::size_t i = common; i < from.size(); ++i) AddLine(to, from[i]);
}

}  // namespace faultline
