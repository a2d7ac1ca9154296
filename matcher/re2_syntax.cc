// SPDX-License-Identifier: Apache-2.0
#include "matcher/re2_syntax.h"

#include <cstdlib>
#include <string>

namespace faultline {

std::optional<GroupOpen> ReadGroupOpen(std::string_view p, std::size_t pos) {
  GroupOpen g;
  if (pos < p.size() && (p[pos] == 'P' || p[pos] == '<')) {
    const std::size_t close = p.find('>', pos);
    if (close == std::string_view::npos) return std::nullopt;
    g.named = true;
    g.end = close + 1;
    return g;
  }
  const std::size_t stop = p.find_first_of(":)", pos);
  if (stop == std::string_view::npos) return std::nullopt;
  g.flags = p.substr(pos, stop - pos);
  g.rest_of_sequence = p[stop] == ')';
  g.end = stop + 1;
  return g;
}

bool CaselessAfter(std::string_view flags, bool caseless) {
  const std::size_t minus = flags.find('-');
  if (flags.substr(0, minus).find('i') != std::string_view::npos) caseless = true;
  if (minus != std::string_view::npos && flags.substr(minus).find('i') != std::string_view::npos) {
    caseless = false;
  }
  return caseless;
}

std::optional<CountedRepeat> ReadCountedRepeat(std::string_view p, std::size_t pos) {
  const std::size_t close = p.find('}', pos);
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view body = p.substr(pos + 1, close - pos - 1);
  if (body.empty() || body[0] == ',' ||
      body.find_first_not_of("0123456789,") != std::string_view::npos) {
    return std::nullopt;
  }
  return CountedRepeat{std::atoi(std::string(body).c_str()), body, close + 1};
}

std::optional<HexEscape> ReadHexEscape(std::string_view p, std::size_t pos) {
  std::string hex;
  std::size_t end = 0;
  if (pos < p.size() && p[pos] == '{') {
    const std::size_t close = p.find('}', pos);
    if (close == std::string_view::npos) return std::nullopt;
    hex = std::string(p.substr(pos + 1, close - pos - 1));
    end = close + 1;
  } else {
    hex = std::string(p.substr(pos, 2));
    end = pos + 2;
  }
  return HexEscape{std::strtol(hex.c_str(), nullptr, 16), end};
}

Quoted ReadQuoted(std::string_view p, std::size_t pos) {
  const std::size_t stop = p.find("\\E", pos);
  if (stop == std::string_view::npos) return {p.substr(pos), p.size()};
  return {p.substr(pos, stop - pos), stop + 2};
}

namespace {

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Recursive descent over the pattern, one node per atom. The first error
// stops it.
class Parser {
 public:
  Parser(std::string_view p, std::string* why) : p_(p), why_(why) {}

  std::optional<ReNode> Run() {
    bool caseless = false;
    ReNode root = Alternation(caseless);
    if (!failed_ && pos_ < p_.size()) Fail("unbalanced ')'");
    if (failed_) return std::nullopt;
    return root;
  }

 private:
  void Fail(const char* why) { Fail(std::string(why)); }
  void Fail(const std::string& why) {
    if (!failed_ && why_) *why_ = why;
    failed_ = true;
  }

  static ReNode Node(ReNode::Kind kind) {
    ReNode n;
    n.kind = kind;
    return n;
  }
  static ReNode Literal(long value, char escape, bool caseless) {
    ReNode n = Node(ReNode::Kind::kLiteral);
    n.value = value;
    n.escape = escape;
    n.caseless = caseless;
    return n;
  }

  // Branches until ')' (not consumed) or the end. A "(?i)" in one branch
  // holds for the next ones too, as in RE2.
  ReNode Alternation(bool caseless) {
    ReNode out = Node(ReNode::Kind::kAlternation);
    out.children.push_back(Concat(caseless));
    while (!failed_ && pos_ < p_.size() && p_[pos_] == '|') {
      ++pos_;
      out.children.push_back(Concat(caseless));
    }
    return out;
  }

  ReNode Concat(bool& caseless) {
    ReNode out = Node(ReNode::Kind::kConcat);
    while (!failed_ && pos_ < p_.size() && p_[pos_] != '|' && p_[pos_] != ')') {
      const std::size_t before = out.children.size();
      const char c = p_[pos_];
      if (c == '(') {
        Group(caseless, out.children);
        if (!out.children.empty() && out.children.back().kind == ReNode::Kind::kFlags) continue;
      } else if (c == '[') {
        Class(caseless, out.children);
      } else if (c == '\\') {
        Escape(caseless, out.children);
      } else if (c == '*' || c == '+' || c == '?' || (c == '{' && ReadCountedRepeat(p_, pos_))) {
        Fail("missing argument to repetition operator");
      } else {
        ++pos_;
        if (c == '.') {
          out.children.push_back(Node(ReNode::Kind::kAnyChar));
        } else if (c == '^') {
          out.children.push_back(Node(ReNode::Kind::kBeginLine));
        } else if (c == '$') {
          out.children.push_back(Node(ReNode::Kind::kEndLine));
        } else {  // '{' that starts no repeat is a literal brace in RE2
          out.children.push_back(Literal(static_cast<unsigned char>(c), 0, caseless));
        }
      }
      if (failed_) break;
      // A quantifier applies to the last node read (the last character of
      // a \Q...\E run).
      if (out.children.size() > before) Quantifier(out.children.back());
    }
    return out;
  }

  void Quantifier(ReNode& atom) {
    if (pos_ >= p_.size()) return;
    ReNode r = Node(ReNode::Kind::kRepeat);
    const char q = p_[pos_];
    if (q == '*' || q == '+' || q == '?') {
      r.op = q;
      r.min = q == '+' ? 1 : 0;
      ++pos_;
    } else if (std::optional<CountedRepeat> counted =
                   q == '{' ? ReadCountedRepeat(p_, pos_) : std::nullopt) {
      r.op = '{';
      r.min = counted->min;
      r.counted = counted->body;
      pos_ = counted->end;
    } else {
      return;
    }
    if (pos_ < p_.size() && p_[pos_] == '?') {  // non-greedy: the same lines match
      r.lazy = true;
      ++pos_;
    }
    r.children.push_back(std::move(atom));
    atom = std::move(r);
  }

  void Group(bool& caseless, std::vector<ReNode>& into) {
    ++pos_;  // '('
    ReNode g = Node(ReNode::Kind::kGroup);
    bool inner = caseless;
    if (pos_ < p_.size() && p_[pos_] == '?') {
      ++pos_;
      std::optional<GroupOpen> open = ReadGroupOpen(p_, pos_);
      if (!open) {
        const bool named = pos_ < p_.size() && (p_[pos_] == 'P' || p_[pos_] == '<');
        return Fail(named ? "bad group name" : "bad group");
      }
      pos_ = open->end;
      g.named = open->named;
      g.flags = open->flags;
      if (open->rest_of_sequence) {
        ReNode f = Node(ReNode::Kind::kFlags);
        f.flags = open->flags;
        caseless = CaselessAfter(open->flags, caseless);
        into.push_back(std::move(f));
        return;
      }
      if (!open->named) inner = CaselessAfter(open->flags, caseless);
    }
    g.children.push_back(Alternation(inner));
    if (failed_) return;
    if (pos_ >= p_.size() || p_[pos_] != ')') return Fail("missing ')'");
    ++pos_;
    into.push_back(std::move(g));
  }

  void Escape(bool caseless, std::vector<ReNode>& into) {
    ++pos_;  // '\\'
    if (pos_ >= p_.size()) return Fail("trailing backslash");
    const char e = p_[pos_++];
    switch (e) {
      case 'n':
        return into.push_back(Literal('\n', e, caseless));
      case 't':
        return into.push_back(Literal('\t', e, caseless));
      case 'r':
        return into.push_back(Literal('\r', e, caseless));
      case 'f':
        return into.push_back(Literal('\f', e, caseless));
      case 'v':
        return into.push_back(Literal('\v', e, caseless));
      case 'a':
        return into.push_back(Literal('\a', e, caseless));
      case 'x': {
        std::optional<HexEscape> h = ReadHexEscape(p_, pos_);
        if (!h) return Fail("bad \\x{}");
        pos_ = h->end;
        return into.push_back(Literal(h->value, e, caseless));
      }
      case 'Q': {
        const Quoted q = ReadQuoted(p_, pos_);
        pos_ = q.end;
        for (char c : q.text) into.push_back(Literal(static_cast<unsigned char>(c), e, caseless));
        return;
      }
      default:
        break;
    }
    if (!IsAsciiAlnum(e)) {  // escaped punctuation: the character itself
      return into.push_back(Literal(static_cast<unsigned char>(e), e, caseless));
    }
    ReNode n = Node(ReNode::Kind::kEscape);
    n.escape = e;
    if ((e == 'p' || e == 'P') && pos_ < p_.size()) {  // \pN or \p{Name}
      if (p_[pos_] == '{') {
        const std::size_t close = p_.find('}', pos_);
        if (close == std::string_view::npos) return Fail("bad \\p{}");
        pos_ = close + 1;
      } else {
        ++pos_;
      }
    }
    into.push_back(std::move(n));
  }

  void Class(bool caseless, std::vector<ReNode>& into) {
    ++pos_;  // '['
    ReNode n = Node(ReNode::Kind::kClass);
    n.caseless = caseless;
    if (pos_ < p_.size() && p_[pos_] == '^') {
      n.negated = true;
      ++pos_;
    }
    bool first = true;
    while (pos_ < p_.size() && (p_[pos_] != ']' || first)) {
      first = false;
      ReClassItem item;
      const char c = p_[pos_];
      if (c == '[') {
        if (p_.compare(pos_, 2, "[:") == 0) {
          const std::size_t close = p_.find(":]", pos_);
          if (close == std::string_view::npos) return Fail("bad [:class:]");
          item.kind = ReClassItem::Kind::kPosix;
          item.text = p_.substr(pos_, close + 2 - pos_);
          pos_ = close + 2;
        } else {
          item.lo = c;
          ++pos_;
        }
        n.items.push_back(item);
        continue;
      }
      item.lo = c;
      ++pos_;
      if (c == '\\') {
        if (pos_ >= p_.size()) return Fail("bad class");
        item.lo = p_[pos_++];
        item.escaped = true;
        if (IsAsciiAlnum(item.lo)) item.kind = ReClassItem::Kind::kEscape;
        if (IsAsciiAlnum(item.lo) || item.lo == '[') {
          n.items.push_back(item);
          continue;
        }
      }
      if (pos_ + 1 < p_.size() && p_[pos_] == '-' && p_[pos_ + 1] != ']') {
        item.kind = ReClassItem::Kind::kRange;
        item.hi = p_[pos_ + 1];
        pos_ += 2;
        if (item.hi == '\\') {
          if (pos_ >= p_.size()) return Fail("bad range");
          item.hi = p_[pos_++];
        }
      }
      n.items.push_back(item);
    }
    if (pos_ >= p_.size()) return Fail("unterminated class");
    ++pos_;  // ']'
    into.push_back(std::move(n));
  }

  std::string_view p_;
  std::size_t pos_ = 0;
  bool failed_ = false;
  std::string* why_;
};

}  // namespace

std::optional<ReNode> ParseRe2(std::string_view pattern, std::string* why) {
  return Parser(pattern, why).Run();
}

}  // namespace faultline
