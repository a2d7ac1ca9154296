// SPDX-License-Identifier: Apache-2.0
#include "matcher/ere_export.h"

#include <cctype>
#include <vector>

#include "matcher/ascii.h"
#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

char OtherCase(char c) {
  return static_cast<char>(std::islower(static_cast<unsigned char>(c)) ? std::toupper(c)
                                                                       : std::tolower(c));
}

// A character outside a bracket: escaped if ERE gives it a meaning.
std::string Literal(char c, bool caseless) {
  if (caseless && IsAsciiLetter(c)) return std::string("[") + c + OtherCase(c) + "]";
  if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) {
    return std::string("\\") + c;
  }
  return std::string(1, c);
}

// Writes the tree ParseRe2 read as ERE, or says why it has no ERE form.
class Translator {
 public:
  explicit Translator(std::string* why) : why_(why) {}

  std::optional<std::string> Run(std::string_view pattern) {
    std::string parse_error;
    std::optional<ReNode> tree = ParseRe2(pattern, &parse_error);
    if (!tree) {
      Fail(parse_error);
      return std::nullopt;
    }
    std::string out = Node(*tree);
    if (failed_) return std::nullopt;
    return out;
  }

 private:
  bool Fail(const std::string& why) {
    if (!failed_ && why_) *why_ = why;
    failed_ = true;
    return false;
  }

  std::string Node(const ReNode& n) {
    std::string out;
    switch (n.kind) {
      case ReNode::Kind::kAlternation:
        for (std::size_t i = 0; i < n.children.size() && !failed_; ++i) {
          if (i > 0) out += '|';
          out += Node(n.children[i]);
        }
        return out;
      case ReNode::Kind::kConcat:
        for (const ReNode& child : n.children) {
          if (failed_) break;
          out += Node(child);
        }
        return out;
      case ReNode::Kind::kGroup:
        if (!n.named && !FlagsOk(n.flags)) return "";
        return "(" + Node(n.children[0]) + ")";
      case ReNode::Kind::kFlags:
        FlagsOk(n.flags);  // (?i) for the rest: already on each literal
        return "";
      case ReNode::Kind::kRepeat:
        out = Node(n.children[0]);
        out += n.op;
        if (n.op == '{') {
          out += n.counted;
          out += '}';
        }
        return out;  // a non-greedy repeat matches the same lines
      case ReNode::Kind::kAnyChar:
        return ".";
      case ReNode::Kind::kBeginLine:
        return "^";
      case ReNode::Kind::kEndLine:
        return "$";
      case ReNode::Kind::kLiteral:
        return LiteralNode(n);
      case ReNode::Kind::kEscape:
        return Escape(n.escape);
      case ReNode::Kind::kClass:
        return Bracket(n);
    }
    return out;
  }

  bool FlagsOk(std::string_view flags) {
    if (flags.find_first_not_of("i-") == std::string_view::npos) return true;
    return Fail("flags other than i (" + std::string(flags) + ")");
  }

  std::string LiteralNode(const ReNode& n) {
    switch (n.escape) {
      case 'n':
      case 'r':
      case 'f':
      case 'v':
      case 'a':
        return Fail(std::string("escape \\") + n.escape + " has no ERE form"), "";
      case 'x':
        if (n.value <= 0 || n.value >= 0x80 || n.value == '\n') {
          return Fail("non-ASCII \\x escape"), "";
        }
        break;
      default:
        break;
    }
    return Literal(static_cast<char>(n.value), n.caseless);
  }

  std::string Escape(char e) {
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
      default:
        return Fail(std::string("escape \\") + e + " has no ERE form"), "";
    }
  }

  // A bracket expression, rewritten so that both grep (POSIX: backslash is
  // literal) and ripgrep (backslash escapes) read the same set.
  std::string Bracket(const ReNode& n) {
    const bool caseless = n.caseless;
    const bool negated = n.negated;
    std::vector<std::string> items;  // chars or ranges or [:class:]
    bool close_bracket = false, dash = false, backslash = false, caret = false;
    bool dropped_newline = false;
    std::string negated_escapes, positive_escapes;  // \S\D\W and \s\d\w inside
    for (const ReClassItem& item : n.items) {
      if (item.kind == ReClassItem::Kind::kPosix) {
        items.emplace_back(item.text);
        continue;
      }
      if (item.kind == ReClassItem::Kind::kChar && item.lo == '[') {
        if (item.escaped) return Fail("'[' inside a class reads differently in grep and rg"), "";
        return Fail("'[' inside a class"), "";
      }
      if (item.kind == ReClassItem::Kind::kEscape) {
        const char e = item.lo;
        if (e == 'S' || e == 'D' || e == 'W') {
          negated_escapes += static_cast<char>(std::tolower(e));
        } else if (e == 'd') {
          items.emplace_back("0-9");
          positive_escapes += 'd';
        } else if (e == 's') {
          items.emplace_back("[:space:]");
          positive_escapes += 's';
        } else if (e == 'w') {
          items.emplace_back("[:alnum:]");
          items.emplace_back("_");
          positive_escapes += 'w';
        } else if (e == 't') {
          items.emplace_back("\t");
        } else if (e == 'n' || e == 'r') {  // never inside one line
          dropped_newline = true;
        } else {
          return Fail(std::string("class escape \\") + e + " has no ERE form"), "";
        }
        continue;
      }
      const char lo = item.lo;
      if (item.kind == ReClassItem::Kind::kRange) {
        const char hi = item.hi;
        if (!std::isalnum(static_cast<unsigned char>(lo)) ||
            !std::isalnum(static_cast<unsigned char>(hi))) {
          return Fail("range of punctuation"), "";
        }
        items.push_back(std::string(1, lo) + "-" + hi);
        if (caseless && IsAsciiLetter(lo) && IsAsciiLetter(hi)) {
          items.push_back(std::string(1, OtherCase(lo)) + "-" + OtherCase(hi));
        }
        continue;
      }
      if (lo == ']') {
        close_bracket = true;
      } else if (lo == '-') {
        dash = true;
      } else if (lo == '\\') {
        backslash = true;
      } else if (lo == '^') {
        caret = true;
      } else {
        items.emplace_back(1, lo);
        if (caseless && IsAsciiLetter(lo)) items.emplace_back(1, OtherCase(lo));
      }
    }
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

  bool failed_ = false;
  std::string* why_;
};

}  // namespace

std::optional<std::string> TranslateToEre(std::string_view re2_pattern, std::string* why) {
  return Translator(why).Run(re2_pattern);
}

}  // namespace faultline
