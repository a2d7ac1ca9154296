// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace faultline {

// A Kubernetes equality-based label selector, as `kubectl get -l` takes it:
// comma-separated terms "k=v", "k==v", "k!=v", "k" (exists) and "!k"
// (absent). The text is passed to the API server's ListNodes unchanged; the
// parsed form decides locally for a single node fetched with GetNode.
// Set-based terms ("k in (a,b)") are not supported and are rejected.
class LabelSelector {
 public:
  // kInvalidArgument names the offending term.
  static Result<LabelSelector> Parse(std::string_view text);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  const std::string& text() const { return text_; }
  bool empty() const { return terms_.empty(); }

 private:
  enum class Op { kEquals, kNotEquals, kExists, kNotExists };
  struct Term {
    std::string key;
    Op op;
    std::string value;
  };
  std::string text_;
  std::vector<Term> terms_;
};

// "key=value" (or "key": any value) as the opt-out label is written.
struct LabelMatch {
  std::string key;
  std::string value;  // empty: the key's presence is enough
  bool Matches(const std::map<std::string, std::string>& labels) const;
  static Result<LabelMatch> Parse(std::string_view text);
};

}  // namespace faultline
