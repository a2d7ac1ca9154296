// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/slurm_reason.h"

namespace faultline {
namespace {

// Control characters (a newline would end scontrol's Reason= line) become spaces.
std::string OneLine(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

// The longest prefix of `s` of at most `n` bytes that does not split a UTF-8 character.
std::string_view CutUtf8(std::string_view s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

}  // namespace

std::string SlurmReasonText(std::string_view prefix, std::string_view rule,
                            std::string_view summary, std::size_t more, std::size_t max_bytes) {
  std::string head = OneLine(prefix);
  if (!head.empty() && head.back() != ' ') head += ' ';
  head += OneLine(rule);
  const std::string tail = more > 0 ? " (+" + std::to_string(more) + " more)" : std::string();
  std::string body = summary.empty() ? std::string() : ": " + OneLine(summary);
  if (head.size() + body.size() + tail.size() <= max_bytes) return head + body + tail;
  constexpr std::string_view kEllipsis = "...";
  const std::size_t fixed = head.size() + tail.size() + kEllipsis.size();
  if (fixed >= max_bytes) {
    // Not even the rule fits: the prefix and as much of the rule as fits.
    const std::size_t keep = std::max(prefix.size(), max_bytes);
    return std::string(CutUtf8(head, keep));
  }
  return head + std::string(CutUtf8(body, max_bytes - fixed)) + std::string(kEllipsis) + tail;
}

bool IsFaultlineReason(std::string_view reason, std::string_view prefix) {
  return !prefix.empty() && reason.starts_with(prefix);
}

}  // namespace faultline
