// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/label_selector.h"

#include <cctype>

#include "base/trim.h"

namespace faultline {
namespace {

// Label keys: optional DNS prefix and '/', then [A-Za-z0-9._-]; values the
// same without '/'. Checked loosely: enough to catch a set-based term or a
// typo before it reaches the API server.
bool ValidKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
          c == '/')) {
      return false;
    }
  }
  return true;
}

bool ValidValue(std::string_view value) {
  for (char c : value) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  selector.text_ = std::string(TrimSpaces(text));
  std::string_view rest = selector.text_;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view raw = TrimSpaces(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (raw.empty()) return InvalidArgumentError("label selector has an empty term");
    Term term;
    if (std::size_t ne = raw.find("!="); ne != std::string_view::npos) {
      term = {std::string(TrimSpaces(raw.substr(0, ne))), Op::kNotEquals,
              std::string(TrimSpaces(raw.substr(ne + 2)))};
    } else if (std::size_t eq = raw.find('='); eq != std::string_view::npos) {
      std::size_t v = eq + 1;
      if (v < raw.size() && raw[v] == '=') ++v;
      term = {std::string(TrimSpaces(raw.substr(0, eq))), Op::kEquals,
              std::string(TrimSpaces(raw.substr(v)))};
    } else if (raw.front() == '!') {
      term = {std::string(TrimSpaces(raw.substr(1))), Op::kNotExists, ""};
    } else {
      term = {std::string(raw), Op::kExists, ""};
    }
    if (!ValidKey(term.key) || !ValidValue(term.value)) {
      return InvalidArgumentError("label selector term '" + std::string(raw) +
                                  "' is not supported: use k=v, k!=v, k or !k joined by commas");
    }
    selector.terms_.push_back(std::move(term));
  }
  return selector;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Term& t : terms_) {
    auto it = labels.find(t.key);
    const bool has = it != labels.end();
    switch (t.op) {
      case Op::kEquals:
        if (!has || it->second != t.value) return false;
        break;
      case Op::kNotEquals:
        if (has && it->second == t.value) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kNotExists:
        if (has) return false;
        break;
    }
  }
  return true;
}

bool LabelMatch::Matches(const std::map<std::string, std::string>& labels) const {
  if (key.empty()) return false;
  auto it = labels.find(key);
  return it != labels.end() && (value.empty() || it->second == value);
}

Result<LabelMatch> LabelMatch::Parse(std::string_view text) {
  LabelMatch m;
  text = TrimSpaces(text);
  if (text.empty()) return m;  // no opt-out label
  std::size_t eq = text.find('=');
  m.key = std::string(TrimSpaces(text.substr(0, eq)));
  if (eq != std::string_view::npos) m.value = std::string(TrimSpaces(text.substr(eq + 1)));
  if (!ValidKey(m.key) || !ValidValue(m.value)) {
    return InvalidArgumentError("label '" + std::string(text) + "' is not of the form key=value");
  }
  return m;
}

}  // namespace faultline
