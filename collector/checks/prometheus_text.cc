// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/prometheus_text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace faultline {
namespace {

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A cursor over one line; every Take* either consumes what it names and
// returns true, or leaves `why` saying what was expected.
class LineParser {
 public:
  explicit LineParser(std::string_view line) : s_(line) {}

  bool Parse(PrometheusSample& out) {
    if (!TakeName(out.name, /*label=*/false)) return Fail("a metric name");
    const std::size_t after_name = i_;
    SkipBlanks();
    if (!Peek('{')) {
      i_ = after_name;  // no labels: the blanks are the value's separator
    } else if (!TakeLabels(out.labels)) {
      return false;
    }
    if (!TakeBlanks()) return Fail("a space before the value");
    if (!TakeValue(out.value)) return Fail("a value (a float, NaN, +Inf or -Inf)");
    if (AtEnd()) return true;
    if (!TakeBlanks()) return Fail("the end of the line after the value");
    if (AtEnd()) return true;
    if (!TakeTimestamp()) return Fail("an integer timestamp");
    SkipBlanks();
    return AtEnd() || Fail("the end of the line");
  }
  const std::string& why() const { return why_; }
  std::size_t column() const { return i_ + 1; }

 private:
  bool AtEnd() const { return i_ == s_.size(); }
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void SkipBlanks() {
    while (i_ < s_.size() && IsBlank(s_[i_])) ++i_;
  }
  bool TakeBlanks() {
    const std::size_t from = i_;
    SkipBlanks();
    return i_ > from;
  }
  bool Fail(std::string_view expected) {
    if (why_.empty()) why_ = "expected " + std::string(expected);
    return false;
  }

  bool TakeName(std::string& out, bool label) {
    if (i_ >= s_.size() || !IsNameStart(s_[i_]) || (label && s_[i_] == ':')) return false;
    const std::size_t from = i_;
    while (i_ < s_.size() && IsNameChar(s_[i_]) && !(label && s_[i_] == ':')) ++i_;
    out.assign(s_.substr(from, i_ - from));
    return true;
  }

  bool TakeLabels(std::vector<std::pair<std::string, std::string>>& out) {
    ++i_;  // '{'
    SkipBlanks();
    if (Peek('}')) {
      ++i_;
      return true;
    }
    while (true) {
      std::string key;
      std::string value;
      SkipBlanks();
      if (!TakeName(key, /*label=*/true)) return Fail("a label name");
      SkipBlanks();
      if (!Peek('=')) return Fail("'=' after the label name");
      ++i_;
      SkipBlanks();
      if (!TakeQuoted(value)) return false;
      for (const auto& [k, v] : out) {
        if (k == key) return Fail("each label once, not '" + key + "' twice");
      }
      out.emplace_back(std::move(key), std::move(value));
      SkipBlanks();
      if (Peek(',')) {
        ++i_;
        SkipBlanks();
        if (Peek('}')) {  // a trailing comma, which the format allows
          ++i_;
          return true;
        }
        continue;
      }
      if (Peek('}')) {
        ++i_;
        return true;
      }
      return Fail("',' or '}' after a label value");
    }
  }

  bool TakeQuoted(std::string& out) {
    if (!Peek('"')) return Fail("a label value in double quotes");
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      const char e = s_[i_++];
      if (e == '\\' || e == '"') {
        out += e;
      } else if (e == 'n') {
        out += '\n';
      } else {
        --i_;
        return Fail("an escape \\\\, \\\" or \\n in a label value");
      }
    }
    return Fail("the closing quote of a label value");
  }

  bool TakeValue(double& out) {
    const std::size_t from = i_;
    while (i_ < s_.size() && !IsBlank(s_[i_])) ++i_;
    const std::string token(s_.substr(from, i_ - from));
    if (token == "NaN") {
      out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    if (token == "+Inf" || token == "Inf") {
      out = std::numeric_limits<double>::infinity();
      return true;
    }
    if (token == "-Inf") {
      out = -std::numeric_limits<double>::infinity();
      return true;
    }
    // strtod alone would take "nan", "infinity" and hex floats, which the
    // format does not; so only digits, sign, '.', and an exponent.
    if (token.empty()) return false;
    for (const char c : token) {
      if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
        i_ = from;
        return false;
      }
    }
    char* end = nullptr;
    errno = 0;
    out = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || errno == ERANGE) {
      i_ = from;
      return false;
    }
    return true;
  }

  bool TakeTimestamp() {
    std::size_t j = i_;
    if (j < s_.size() && s_[j] == '-') ++j;
    const std::size_t digits = j;
    while (j < s_.size() && s_[j] >= '0' && s_[j] <= '9') ++j;
    if (j == digits || j - digits > 19 || (j < s_.size() && !IsBlank(s_[j]))) return false;
    i_ = j;
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  std::string why_;
};

}  // namespace

std::string PrometheusSample::Label(std::string_view key) const {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return "";
}

Result<std::vector<PrometheusSample>> ParsePrometheusText(std::string_view text) {
  std::vector<PrometheusSample> out;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t start = 0;
    while (start < line.size() && IsBlank(line[start])) ++start;
    line.remove_prefix(start);
    if (line.empty() || line.front() == '#') continue;
    for (const char c : line) {
      if (c == '\0') {
        return InvalidArgumentError("line " + std::to_string(line_number) + ": a NUL byte");
      }
    }
    PrometheusSample sample;
    LineParser parser(line);
    if (!parser.Parse(sample)) {
      return InvalidArgumentError("line " + std::to_string(line_number) + ", column " +
                                  std::to_string(parser.column() + start) + ": " + parser.why());
    }
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace faultline
