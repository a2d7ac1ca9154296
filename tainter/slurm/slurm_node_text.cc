// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/slurm_node_text.h"

#include <optional>

namespace faultline {
namespace {

// The "+"-separated words of State=: the base state, then its flags.
bool HasStateWord(std::string_view state, std::string_view word) {
  std::size_t start = 0;
  while (start <= state.size()) {
    std::size_t end = state.find('+', start);
    if (end == std::string_view::npos) end = state.size();
    if (state.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

// Fields whose value runs to the end of the line (free text, may hold spaces
// and '='), as scontrol prints them on a line of their own.
constexpr std::string_view kWholeLineKeys[] = {"Reason=", "Comment=", "Extra=", "OS="};

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Splits "a,b,c" into its words.
std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void SetField(SlurmNode& node, std::string_view key, std::string_view value) {
  if (key == "NodeName") {
    node.name = std::string(value);
  } else if (key == "State") {
    node.state = std::string(value);
  } else if (key == "BootTime") {
    node.boot_time = value == "None" ? std::string() : std::string(value);
  } else if (key == "Partitions") {
    node.partitions = SplitCommas(value);
  }
}

// "text [user@2026-11-27T10:54:58]": the tag Slurm appends to a reason.
void SetReason(SlurmNode& node, std::string_view value) {
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (!value.empty() && value.back() == ']') {
    std::size_t open = value.rfind(" [");
    if (open != std::string_view::npos) {
      std::string_view tag = value.substr(open + 2, value.size() - open - 3);
      std::size_t at = tag.find('@');
      if (at != std::string_view::npos) {
        node.reason_user = std::string(tag.substr(0, at));
        value = value.substr(0, open);
      }
    }
  }
  node.reason = std::string(value);
}

void ParseLine(SlurmNode& node, std::string_view line) {
  line = TrimLeft(line);
  for (std::string_view key : kWholeLineKeys) {
    if (line.starts_with(key)) {
      std::string_view value = line.substr(key.size());
      if (key == "Reason=") {
        SetReason(node, value);
      } else if (key == "Comment=") {
        node.comment = value == "(null)" ? std::string() : std::string(value);
      } else if (key == "Extra=") {
        node.extra = value == "(null)" ? std::string() : std::string(value);
      }
      return;
    }
  }
  // Space-separated Key=value words.
  std::size_t start = 0;
  while (start < line.size()) {
    std::size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    std::string_view word = line.substr(start, end - start);
    std::size_t eq = word.find('=');
    if (eq != std::string_view::npos) SetField(node, word.substr(0, eq), word.substr(eq + 1));
    start = end + 1;
  }
}

}  // namespace

bool SlurmNode::Drain() const { return HasStateWord(state, "DRAIN"); }
bool SlurmNode::Down() const { return state == "DOWN" || state.starts_with("DOWN+"); }
bool SlurmNode::Fail() const { return HasStateWord(state, "FAIL"); }

std::vector<SlurmNode> ParseScontrolNodes(std::string_view text) {
  std::vector<SlurmNode> nodes;
  std::optional<SlurmNode> current;
  auto finish = [&] {
    if (current && !current->name.empty()) nodes.push_back(std::move(*current));
    current.reset();
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (TrimLeft(line).empty()) {
      finish();
      continue;
    }
    // A block starts at the unindented NodeName= line.
    if (line.starts_with("NodeName=")) finish();
    if (!current) current.emplace();
    ParseLine(*current, line);
  }
  finish();
  return nodes;
}

}  // namespace faultline
