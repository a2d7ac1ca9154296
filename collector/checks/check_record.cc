// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/check_record.h"

namespace faultline {
namespace {

constexpr std::size_t kMaxMessageBytes = 512;
constexpr std::size_t kMaxValueBytes = 128;

// A value is one token: whitespace becomes '_', other control bytes '?'.
std::string Token(std::string_view value) {
  std::string out;
  out.reserve(std::min(value.size(), kMaxValueBytes));
  for (char c : value.substr(0, kMaxValueBytes)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      out += '_';
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string_view CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kUnknown:
      return "unknown";
    case CheckStatus::kHung:
      return "hung";
    case CheckStatus::kError:
      return "error";
  }
  return "unknown";
}

void AppendNodeSummaries(std::vector<CheckFinding>& findings,
                         std::span<const std::string_view> counters, std::string_view noun) {
  const std::size_t per_device = findings.size();
  for (std::string_view counter : counters) {
    int checked = 0;
    int passed = 0;
    for (std::size_t i = 0; i < per_device; ++i) {
      if (findings[i].Field("counter") != counter) continue;
      ++checked;
      passed += findings[i].status == CheckStatus::kOk ? 1 : 0;
    }
    if (checked == 0) continue;
    CheckFinding f;
    f.status = passed == checked ? CheckStatus::kOk : CheckStatus::kFail;
    f.fields = {{"device", "node"},
                {"counter", std::string(counter)},
                {"value", std::to_string(passed)},
                {"expected", std::to_string(checked)}};
    f.message = std::to_string(passed) + " of " + std::to_string(checked) + " " +
                std::string(noun) + " pass " + std::string(counter);
    findings.push_back(std::move(f));
  }
}

std::string CheckFinding::Field(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return v;
  }
  return "";
}

std::string FormatCheckText(std::string_view check, const CheckFinding& finding) {
  std::string text =
      "check=" + Token(check) + " status=" + std::string(CheckStatusName(finding.status));
  for (const auto& [key, value] : finding.fields) {
    text += ' ';
    text += Token(key);
    text += '=';
    text += Token(value);
  }
  text += " msg=";
  // One line: a multi-line message (a plugin's stdout) is folded.
  for (char c : std::string_view(finding.message).substr(0, kMaxMessageBytes)) {
    const auto u = static_cast<unsigned char>(c);
    text += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

LogRecord MakeCheckRecord(std::string_view check, const CheckFinding& finding) {
  LogRecord r;
  r.source = "checks";
  r.origin = Origin::kCheck;
  r.text = FormatCheckText(check, finding);
  r.labels["check"] = std::string(check);
  r.labels["status"] = std::string(CheckStatusName(finding.status));
  for (const auto& [key, value] : finding.fields) r.labels[key] = value;
  return r;
}

std::string MissingOrUnknown(std::string_view known_gone) {
  return known_gone.empty() ? "unknown" : std::string(known_gone);
}

}  // namespace faultline
