// SPDX-License-Identifier: Apache-2.0
#include "matcher/ere_export.h"

#include <cctype>
#include <vector>

#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char OtherCase(char c) {
  return static_cast<char>(std::islower(static_cast<unsigned char>(c)) ? std::toupper(c)
                                                                       : std::tolower(c));
}

// A character outside a bracket: escaped if ERE gives it a meaning.
std::string Literal(char c, bool caseless) {
  if (caseless && IsLetter(c)) return std::string("[") + c + OtherCase(c) + "]";
  if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) {
    return std::string("\\") + c;
  }
  return std::string(1, c);
}

class Translator {
 public:
  Translator(std::string_view p, std::string* why) : p_(p), why_(why) {}

  std::optional<std::string> Run() {
    std::string out = Sequence(false, 0);
    if (failed_) return std::nullopt;
    return out;
  }

 private:
  bool Fail(const std::string& why) {
    if (!failed_ && why_) *why_ = why;
    failed_ = true;
    return false;
  }

  // Reads until ')' at this depth (not consumed) or the end.
  std::string Sequence(bool caseless, int depth) {
    std::string out;
    while (!failed_ && pos_ < p_.size()) {
      char c = p_[pos_];
      if (c == ')') {
        if (depth == 0) Fail("unbalanced ')'");
        return out;
      }
      if (c == '(') {
        ++pos_;
        bool inner = caseless;
        if (p_.compare(pos_, 1, "?") == 0) {
          ++pos_;
          std::optional<GroupOpen> g = ReadGroupOpen(p_, pos_);
          if (!g) {
            const bool named = pos_ < p_.size() && (p_[pos_] == 'P' || p_[pos_] == '<');
            return Fail(named ? "bad group name" : "bad group"), out;
          }
          pos_ = g->end;
          if (!g->named) {
            if (g->flags.find_first_not_of("i-") != std::string_view::npos) {
              return Fail("flags other than i (" + std::string(g->flags) + ")"), out;
            }
            if (g->rest_of_sequence) {  // (?i) for the rest of this sequence
              caseless = CaselessAfter(g->flags, caseless);
              continue;
            }
            inner = CaselessAfter(g->flags, caseless);
          }
        }
        std::string body = Sequence(inner, depth + 1);
        if (failed_) return out;
        if (pos_ >= p_.size() || p_[pos_] != ')') return Fail("missing ')'"), out;
        ++pos_;
        out += "(" + body + ")";
        continue;
      }
      if (c == '[') {
        out += Bracket(caseless);
        continue;
      }
      if (c == '\\') {
        out += Escape(caseless);
        continue;
      }
      if (c == '*' || c == '+' || c == '?') {
        out += c;
        ++pos_;
        if (pos_ < p_.size() && p_[pos_] == '?') ++pos_;  // lazy: same lines match
        continue;
      }
      if (c == '{') {
        if (std::optional<CountedRepeat> r = ReadCountedRepeat(p_, pos_)) {
          out += '{';
          out += r->body;
          out += '}';
          pos_ = r->end;
          if (pos_ < p_.size() && p_[pos_] == '?') ++pos_;
        } else {
          out += "\\{";
          ++pos_;
        }
        continue;
      }
      if (c == '.' || c == '|' || c == '^' || c == '$') {
        out += c;
        ++pos_;
        continue;
      }
      out += Literal(c, caseless);
      ++pos_;
    }
    return out;
  }

  std::string Escape(bool caseless) {
    ++pos_;
    if (pos_ >= p_.size()) return Fail("trailing backslash"), "";
    char e = p_[pos_++];
    switch (e) {
      case 'd':
        return "[0-9]";
      case 'D':
        return "[^0-9]";
      case 's':
        return "[[:space:]]";
      case 'S':
        return "[^[:space:]]";
      case 'w':
        return "[[:alnum:]_]";
      case 'W':
        return "[^[:alnum:]_]";
      case 'b':
        return "\\b";
      case 'B':
        return "\\B";
      case 'A':
        return "^";
      case 'z':
        return "$";
      case 't':
        return "\t";
      case 'x': {
        std::optional<HexEscape> h = ReadHexEscape(p_, pos_);
        if (!h) return Fail("bad \\x{}"), "";
        pos_ = h->end;
        const long v = h->value;
        if (v <= 0 || v >= 0x80 || v == '\n') return Fail("non-ASCII \\x escape"), "";
        return Literal(static_cast<char>(v), caseless);
      }
      case 'Q': {
        const Quoted q = ReadQuoted(p_, pos_);
        pos_ = q.end;
        std::string out;
        for (char c : q.text) out += Literal(c, caseless);
        return out;
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(e))) {
          return Fail(std::string("escape \\") + e + " has no ERE form"), "";
        }
        return Literal(e, caseless);
    }
  }

  // A bracket expression, rewritten so that both grep (POSIX: backslash is
  // literal) and ripgrep (backslash escapes) read the same set.
  std::string Bracket(bool caseless) {
    ++pos_;  // '['
    bool negated = false;
    if (pos_ < p_.size() && p_[pos_] == '^') {
      negated = true;
      ++pos_;
    }
    std::vector<std::string> items;  // chars or ranges or [:class:]
    bool close_bracket = false, dash = false, backslash = false, caret = false;
    bool first = true, dropped_newline = false;
    std::string negated_escapes, positive_escapes;  // \S\D\W and \s\d\w inside
    while (pos_ < p_.size() && (p_[pos_] != ']' || first)) {
      first = false;
      char c = p_[pos_];
      if (c == '[') {
        if (p_.compare(pos_, 2, "[:") == 0) {
          std::size_t close = p_.find(":]", pos_);
          if (close == std::string_view::npos) return Fail("bad [:class:]"), "";
          items.emplace_back(p_.substr(pos_, close + 2 - pos_));
          pos_ = close + 2;
          continue;
        }
        return Fail("'[' inside a class"), "";
      }
      char lo = c;
      if (c == '\\') {
        ++pos_;
        if (pos_ >= p_.size()) return Fail("bad class"), "";
        char e = p_[pos_];
        ++pos_;
        if (e == 'S' || e == 'D' || e == 'W') {
          negated_escapes += static_cast<char>(std::tolower(e));
          continue;
        }
        if (e == 'd') {
          items.emplace_back("0-9");
          positive_escapes += 'd';
          continue;
        }
        if (e == 's') {
          items.emplace_back("[:space:]");
          positive_escapes += 's';
          continue;
        }
        if (e == 'w') {
          items.emplace_back("[:alnum:]");
          items.emplace_back("_");
          positive_escapes += 'w';
          continue;
        }
        if (e == 't') {
          items.emplace_back("\t");
          continue;
        }
        if (e == 'n' || e == 'r') {  // never inside one line
          dropped_newline = true;
          continue;
        }
        if (std::isalnum(static_cast<unsigned char>(e))) {
          return Fail(std::string("class escape \\") + e + " has no ERE form"), "";
        }
        if (e == '[') return Fail("'[' inside a class reads differently in grep and rg"), "";
        lo = e;
      } else {
        ++pos_;
      }
      // A range?
      if (pos_ + 1 < p_.size() && p_[pos_] == '-' && p_[pos_ + 1] != ']') {
        char hi = p_[pos_ + 1];
        pos_ += 2;
        if (hi == '\\') {
          if (pos_ >= p_.size()) return Fail("bad range"), "";
          hi = p_[pos_++];
        }
        if (!std::isalnum(static_cast<unsigned char>(lo)) ||
            !std::isalnum(static_cast<unsigned char>(hi))) {
          return Fail("range of punctuation"), "";
        }
        items.push_back(std::string(1, lo) + "-" + hi);
        if (caseless && IsLetter(lo) && IsLetter(hi)) {
          items.push_back(std::string(1, OtherCase(lo)) + "-" + OtherCase(hi));
        }
        continue;
      }
      if (lo == ']')
        close_bracket = true;
      else if (lo == '-')
        dash = true;
      else if (lo == '\\')
        backslash = true;
      else if (lo == '^')
        caret = true;
      else {
        items.emplace_back(1, lo);
        if (caseless && IsLetter(lo)) items.emplace_back(1, OtherCase(lo));
      }
    }
    if (pos_ >= p_.size()) return Fail("unterminated class"), "";
    ++pos_;  // ']'
    if (!negated_escapes.empty()) {
      // [\s\S] and the like: any character (of a line). Other mixes have no
      // portable bracket form.
      bool any = false;
      for (char e : negated_escapes) any = any || positive_escapes.find(e) != std::string::npos;
      if (any && !negated) return ".";
      return Fail("negated escape inside a class"), "";
    }
    if (backslash) return Fail("backslash inside a class reads differently in grep and rg"), "";
    if (items.empty() && !close_bracket && !dash && !caret && dropped_newline) {
      if (negated) return ".";  // [^\n]: any character of a line
      return Fail("class of only line breaks"), "";
    }
    std::string out = negated ? "[^" : "[";
    if (close_bracket) out += "]";
    for (const std::string& item : items) out += item;
    if (caret) out += "^";
    if (dash) out += "-";
    if (out == "[" || out == "[^") return Fail("empty class"), "";
    if (caret && items.empty() && !close_bracket) {
      if (negated) return Fail("class of only '^'"), "";
      return dash ? "[-^]" : "\\^";  // "[^]" would read as a negation
    }
    return out + "]";
  }

  std::string_view p_;
  std::size_t pos_ = 0;
  bool failed_ = false;
  std::string* why_;
};

}  // namespace

std::optional<std::string> TranslateToEre(std::string_view re2_pattern, std::string* why) {
  return Translator(re2_pattern, why).Run();
}

}  // namespace faultline
