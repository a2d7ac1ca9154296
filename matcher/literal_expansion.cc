// SPDX-License-Identifier: Apache-2.0
// ExtractExpandedLiteralSets: a walk over ParseRe2's tree that computes, per
// node, the finite set of strings it matches exactly (when small), and the
// sets every match of it starts and ends with; a sequence joins them into
// cross products ("Link " x {"is ", ""} x {"U", "u"} x "p").
#include "matcher/literal_expansion.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "matcher/ascii.h"
#include "matcher/find_literal.h"
#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

using Words = std::vector<RequiredLiteral>;

// Larger products are not worth a confirm check (each literal is one
// memmem over the candidate line).
constexpr std::size_t kMaxWords = 32;
// A class is spelt out only up to this many characters (\d is ten).
constexpr std::size_t kMaxClassChars = 10;
constexpr std::size_t kMaxSets = 2;
// A confirm check searches the line once per literal.
constexpr std::size_t kMaxSetWords = 20;

struct Info {
  std::optional<Words> exact;   // every match is exactly one of these
  std::optional<Words> prefix;  // every match starts with one of these
  std::optional<Words> suffix;  // every match ends with one of these
  // An exact node's words are its start and end too (not copied there).
  const std::optional<Words>& Prefix() const { return exact ? exact : prefix; }
  const std::optional<Words>& Suffix() const { return exact ? exact : suffix; }
};

// Every x then y; a caseless part makes the joined literal caseless (a
// caseless search finds the case-sensitive text too). Nullopt when too many.
std::optional<Words> Cross(const Words& a, const Words& b) {
  if (a.size() * b.size() > kMaxWords) return std::nullopt;
  Words out;
  for (const RequiredLiteral& x : a) {
    for (const RequiredLiteral& y : b) {
      const bool caseless = x.caseless || y.caseless;
      out.push_back({x.text + y.text, caseless});
    }
  }
  SortUniqueLiterals(out);
  return out;
}

std::optional<Words> Union(const std::vector<const Words*>& parts) {
  Words out;
  for (const Words* p : parts) {
    if (!p) return std::nullopt;
    out.insert(out.end(), p->begin(), p->end());
  }
  SortUniqueLiterals(out);
  if (out.size() > kMaxWords) return std::nullopt;
  return out;
}

Info ExactInfo(Words w) {
  Info i;
  i.exact = std::move(w);
  return i;
}

// One byte as a literal, or nullopt where the plain extractor breaks too
// (':' and newline, see literal_prefilter.h), never for non-ASCII.
std::optional<RequiredLiteral> Char(long value, bool caseless) {
  // Non-ASCII: the tree's value may be a code point, not a byte.
  if (value < 0 || value >= 0x80) return std::nullopt;
  const char c = static_cast<char>(value);
  if (c == ':' || c == '\n') return std::nullopt;
  if (caseless && IsAsciiLetter(c)) {
    return RequiredLiteral{std::string(1, static_cast<char>(c | 0x20)), true};
  }
  return RequiredLiteral{std::string(1, c), false};
}

Words Digits() {
  Words w;
  for (char c = '0'; c <= '9'; ++c) w.push_back({std::string(1, c), false});
  return w;
}

std::optional<Words> ClassWords(const ReNode& n) {
  if (n.negated) return std::nullopt;
  Words w;
  auto add = [&](long v) {
    std::optional<RequiredLiteral> lit = Char(v, n.caseless);
    if (!lit) return false;
    w.push_back(*lit);
    return w.size() <= 2 * kMaxClassChars;
  };
  for (const ReClassItem& item : n.items) {
    switch (item.kind) {
      case ReClassItem::Kind::kChar:
        if (!add(static_cast<unsigned char>(item.lo))) return std::nullopt;
        break;
      case ReClassItem::Kind::kRange: {
        const int lo = static_cast<unsigned char>(item.lo),
                  hi = static_cast<unsigned char>(item.hi);
        if (hi < lo || hi - lo >= static_cast<int>(kMaxClassChars)) return std::nullopt;
        for (int c = lo; c <= hi; ++c) {
          if (!add(c)) return std::nullopt;
        }
        break;
      }
      case ReClassItem::Kind::kEscape:
        if (item.lo != 'd') return std::nullopt;
        for (const RequiredLiteral& d : Digits()) w.push_back(d);
        break;
      default:
        return std::nullopt;
    }
  }
  SortUniqueLiterals(w);
  if (w.empty() || w.size() > kMaxClassChars) return std::nullopt;
  return w;
}

// A literal that holds another of its set says nothing more ("NIC Link
// Up" holds "Link Up"): dropped, so that a confirm check searches less. (A
// caseless literal is dropped only for a caseless one it holds.)
void DropContaining(Words& w) {
  Words keep;
  for (const RequiredLiteral& a : w) {
    const bool redundant = std::any_of(w.begin(), w.end(), [&](const RequiredLiteral& b) {
      return &a != &b && b.text.size() < a.text.size() && (b.caseless || !a.caseless) &&
             a.text.find(b.text) != std::string::npos;
    });
    if (!redundant) keep.push_back(a);
  }
  w = std::move(keep);
}

class Expander {
 public:
  // The sets found in the pattern's top-level sequence.
  std::vector<Words> Run(std::string_view pattern) {
    std::optional<ReNode> tree = ParseRe2(pattern, nullptr);
    if (!tree) return {};
    // Several branches: a set of one is not required by the others (and
    // the plain extractor already joins the branches' literals).
    if (tree->children.size() != 1) return {};
    collect_ = true;
    Concat(tree->children[0]);
    if (failed_) return {};
    return found_;
  }

 private:
  static bool KnownFlags(std::string_view flags) {
    return flags.find_first_not_of("imsU-") == std::string_view::npos;
  }

  void Emit(const std::optional<Words>& w, bool joined) {
    if (collect_ && w && joined) found_.push_back(*w);
  }

  Info Alternation(const ReNode& n) {
    if (n.children.size() == 1) return Concat(n.children[0]);
    const bool collect = collect_;
    collect_ = false;  // a branch's sets are not required by the others
    std::vector<Info> branches;
    for (const ReNode& b : n.children) branches.push_back(Concat(b));
    collect_ = collect;
    Info out;
    auto join = [&](std::optional<Words> Info::*field) {
      std::vector<const Words*> parts;
      parts.reserve(branches.size());
      for (const Info& b : branches) parts.push_back((b.*field) ? &*(b.*field) : nullptr);
      return Union(parts);
    };
    out.exact = join(&Info::exact);
    if (!out.exact) {
      std::vector<const Words*> starts, ends;
      for (const Info& b : branches) {
        starts.push_back(b.Prefix() ? &*b.Prefix() : nullptr);
        ends.push_back(b.Suffix() ? &*b.Suffix() : nullptr);
      }
      out.prefix = Union(starts);
      out.suffix = Union(ends);
    }
    return out;
  }

  // A sequence: runs of exactly-known atoms joined, each run extended into
  // the start of the atom after it and begun from the end of the atom
  // before it.
  Info Concat(const ReNode& n) {
    const bool collect = collect_;
    collect_ = false;  // nested sequences report through exact/prefix/suffix
    std::optional<Words> run = Words{{"", false}};
    bool joined = false;  // the run holds a choice (more than plain text)
    bool all_exact = true;
    Info out;
    bool first = true;
    for (const ReNode& child : n.children) {
      if (child.kind == ReNode::Kind::kFlags) {
        if (child.flags.empty() || !KnownFlags(child.flags)) failed_ = true;
        continue;
      }
      Info a = Atom(child);
      if (a.exact && a.exact->size() == 1) {  // plain text: appended in place
        const RequiredLiteral& w = a.exact->front();
        for (RequiredLiteral& r : *run) {
          r.text += w.text;
          r.caseless |= w.caseless;
        }
        continue;
      }
      if (a.exact) {
        if (std::optional<Words> next = Cross(*run, *a.exact)) {
          joined |= a.exact->size() > 1 || a.exact->front().text.empty();
          run = std::move(next);
          continue;
        }
      }
      // The run ends here: into the atom's start if small enough.
      std::optional<Words> ended = run;
      bool ended_joined = joined;
      if (a.Prefix()) {
        if (std::optional<Words> next = Cross(*run, *a.Prefix())) {
          ended_joined |= a.Prefix()->size() > 1;
          ended = std::move(next);
        }
      }
      if (first) out.prefix = ended;
      collect_ = collect;
      Emit(ended, ended_joined);
      collect_ = false;
      all_exact = false;
      first = false;
      // Begun from the atom's end, or from nothing known ("").
      run = a.Suffix() ? *a.Suffix() : Words{{"", false}};
      joined = run->size() > 1;
    }
    collect_ = collect;
    Emit(run, joined);
    if (all_exact) return ExactInfo(*run);
    out.suffix = run;
    return out;
  }

  Info Atom(const ReNode& n) {
    switch (n.kind) {
      case ReNode::Kind::kLiteral:
        if (std::optional<RequiredLiteral> c = Char(n.value, n.caseless)) {
          return ExactInfo({*c});
        }
        return Info{};
      case ReNode::Kind::kClass:
        if (std::optional<Words> w = ClassWords(n)) return ExactInfo(*w);
        return Info{};
      case ReNode::Kind::kEscape:
        if (n.escape == 'd') return ExactInfo(Digits());
        return Info{};
      case ReNode::Kind::kGroup:
        if (!n.named && !KnownFlags(n.flags)) {
          failed_ = true;
          return Info{};
        }
        return Alternation(n.children[0]);
      case ReNode::Kind::kAlternation:
        return Alternation(n);
      case ReNode::Kind::kRepeat: {
        Info inner = Atom(n.children[0]);
        const bool optional = n.op == '?' || (n.op == '{' && (n.counted == "0,1"));
        if (optional) {
          if (!inner.exact) return Info{};
          Words w = *inner.exact;
          w.push_back({"", false});
          SortUniqueLiterals(w);
          if (w.size() > kMaxWords) return Info{};
          return ExactInfo(std::move(w));
        }
        if (n.min >= 1) {  // '+' or {n,...}: starts and ends as its atom does
          Info out;
          out.prefix = inner.Prefix();
          out.suffix = inner.Suffix();
          return out;
        }
        return Info{};
      }
      default:  // '.', anchors, \b \w \s ...: no literal
        return Info{};
    }
  }

  bool collect_ = false;
  bool failed_ = false;
  std::vector<Words> found_;
};

}  // namespace

std::vector<std::vector<RequiredLiteral>> ExtractExpandedLiteralSets(std::string_view pattern,
                                                                     std::size_t min_bytes) {
  std::vector<Words> sets;
  for (Words& w : Expander().Run(pattern)) {
    if (w.size() < 2) continue;  // plain text: the plain extractor has it
    if (std::any_of(w.begin(), w.end(),
                    [&](const RequiredLiteral& l) { return l.text.size() < min_bytes; })) {
      continue;
    }
    DropContaining(w);
    if (w.size() > kMaxSetWords) continue;
    if (std::find(sets.begin(), sets.end(), w) != sets.end()) continue;
    sets.push_back(std::move(w));
  }
  auto shortest = [](const Words& w) {
    std::size_t m = SIZE_MAX;
    for (const RequiredLiteral& l : w) m = std::min(m, l.text.size());
    return m;
  };
  std::stable_sort(sets.begin(), sets.end(),
                   [&](const Words& a, const Words& b) { return shortest(a) > shortest(b); });
  if (sets.size() > kMaxSets) sets.resize(kMaxSets);
  return sets;
}

ExpandedSet MakeExpandedSet(std::vector<RequiredLiteral> literals) {
  ExpandedSet set;
  set.literals = std::move(literals);
  const bool caseless = std::any_of(set.literals.begin(), set.literals.end(),
                                    [](const RequiredLiteral& l) { return l.caseless; });
  if (set.literals.empty() || caseless) return set;
  const std::string& first = set.literals.front().text;
  std::size_t head = first.size(), tail = first.size();
  for (const RequiredLiteral& l : set.literals) {
    std::size_t h = 0, t = 0;
    while (h < head && h < l.text.size() && l.text[h] == first[h]) ++h;
    while (t < tail && t < l.text.size() &&
           l.text[l.text.size() - 1 - t] == first[first.size() - 1 - t]) {
      ++t;
    }
    head = h;
    tail = t;
  }
  constexpr std::size_t kMinCommon = 3;
  if (std::max(head, tail) < kMinCommon) return set;
  set.common_is_tail = tail > head;
  set.common = set.common_is_tail ? first.substr(first.size() - tail) : first.substr(0, head);
  return set;
}

bool LineHasOneOf(std::string_view line, const ExpandedSet& set) {
  if (set.common.empty()) {
    return std::any_of(set.literals.begin(), set.literals.end(),
                       [&](const RequiredLiteral& l) { return LineHasLiteral(line, l); });
  }
  const std::size_t n = set.common.size();
  for (std::size_t from = 0; from + n <= line.size();) {
    const std::size_t at = FindLiteral(line, set.common, false, from);
    if (at == std::string_view::npos) return false;
    for (const RequiredLiteral& l : set.literals) {
      const std::size_t rest = l.text.size() - n;
      if (set.common_is_tail) {
        if (at >= rest && line.compare(at - rest, rest, l.text, 0, rest) == 0) return true;
      } else if (line.size() - at - n >= rest && line.compare(at + n, rest, l.text, n, rest) == 0) {
        return true;
      }
    }
    from = at + 1;
  }
  return false;
}

}  // namespace faultline
