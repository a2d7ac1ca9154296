// SPDX-License-Identifier: Apache-2.0
#include "matcher/anchored_capture.h"

#include <algorithm>
#include <array>
#include <optional>

#include "matcher/ascii.h"
#include "matcher/find_literal.h"
#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

bool HasLetter(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return IsAsciiLetter(c); });
}

// A literal being read from the pattern: `open` while the items after it
// may still be appended (a literal closed by a branch that could not be
// followed to its end stays a literal every match through that branch
// begins with).
struct Lead {
  LeadingLiteral literal;
  bool open = true;
};

void Close(std::vector<Lead>& leads) {
  for (Lead& lead : leads) lead.open = false;
}

bool AnyOpen(const std::vector<Lead>& leads) {
  return std::any_of(leads.begin(), leads.end(), [](const Lead& l) { return l.open; });
}

bool SameLiteral(const LeadingLiteral& a, const LeadingLiteral& b) {
  return a.caseless == b.caseless && a.text == b.text;
}

// How a pattern is walked: `optionals` reads an optional item (X?, X*) as X
// or nothing, which multiplies the literals before it (else it closes
// them); `overflowed` notes that some alternatives passed
// kMaxLeadingLiterals, when a walk without optionals may still find some.
struct Walk {
  bool optionals = true;
  bool overflowed = false;
};

bool Extend(const ReNode& node, Walk& walk, std::vector<Lead>& leads);

// The alternatives' literals side by side: each branch (nullptr: nothing)
// extends its own copy of the open literals (a closed one is kept once); a
// literal that two branches end alike is kept once; the literals of
// `closing` are closed after it (a repeat may go on). More than
// kMaxLeadingLiterals: the literals so far stand, closed.
bool ExtendBranches(const std::vector<const ReNode*>& branches, Walk& walk,
                    std::vector<Lead>& leads, const ReNode* closing = nullptr) {
  std::vector<Lead> all;
  std::vector<Lead> open;
  for (Lead& lead : leads) (lead.open ? open : all).push_back(lead);
  for (const ReNode* branch : branches) {
    std::vector<Lead> copy = open;
    if (branch != nullptr) Extend(*branch, walk, copy);
    if (branch != nullptr && branch == closing) Close(copy);
    for (Lead& lead : copy) {
      const bool seen = std::any_of(all.begin(), all.end(), [&](const Lead& l) {
        return l.open == lead.open && SameLiteral(l.literal, lead.literal);
      });
      if (!seen) all.push_back(std::move(lead));
    }
    if (all.size() > kMaxLeadingLiterals) {
      walk.overflowed = true;
      Close(leads);
      return false;
    }
  }
  leads = std::move(all);
  return AnyOpen(leads);
}

// Extends every open literal of `leads` by what `node` matches first. Every
// match of the pattern so far begins with one of `leads`, before and after
// (cutting a literal short keeps that true, so any doubt closes it). A
// branch of an alternation that cannot be followed closes its own literals
// only: `(?:amdgpu <pci>: |\b)ring` begins with "amdgpu " or "ring". True
// while a literal is open: the caller may go on to the next item.
bool Extend(const ReNode& node, Walk& walk, std::vector<Lead>& leads) {
  switch (node.kind) {
    case ReNode::Kind::kAlternation: {
      if (node.children.size() == 1) return Extend(node.children[0], walk, leads);
      std::vector<const ReNode*> branches;
      for (const ReNode& branch : node.children) branches.push_back(&branch);
      return ExtendBranches(branches, walk, leads);
    }
    case ReNode::Kind::kConcat:
      for (const ReNode& child : node.children) {
        if (!Extend(child, walk, leads)) return false;
      }
      return AnyOpen(leads);
    case ReNode::Kind::kGroup:
      // Whatever its flags: a literal records its own case (the only flag
      // that changes what a literal matches).
      if (node.children.size() != 1) {
        Close(leads);
        return false;
      }
      return Extend(node.children[0], walk, leads);
    case ReNode::Kind::kFlags:
      return AnyOpen(leads);  // as for a group's flags
    case ReNode::Kind::kRepeat:
      // X? is X or nothing, X* is X (then who knows) or nothing; X+ and
      // X{n,...} (n >= 1) begin with X. After X, a repeat may go on: closed.
      if (node.children.size() != 1 || (node.min == 0 && !walk.optionals)) {
        Close(leads);
        return false;
      }
      // X? is X or nothing; X* nothing or X, closed after X.
      if (node.op == '?') return ExtendBranches({&node.children[0], nullptr}, walk, leads);
      if (node.min == 0) {
        return ExtendBranches({nullptr, &node.children[0]}, walk, leads, &node.children[0]);
      }
      Extend(node.children[0], walk, leads);
      Close(leads);
      return false;
    case ReNode::Kind::kLiteral: {
      // RE2 reads the pattern as UTF-8: a code point past ASCII is more
      // than one byte, and a raw byte past ASCII is part of one.
      if (node.value <= 0 || node.value >= 0x80) {
        Close(leads);
        return false;
      }
      const char c = static_cast<char>(node.value);
      const bool caseless = node.caseless && IsAsciiLetter(c);
      for (Lead& lead : leads) {
        if (!lead.open) continue;
        // (?i)k matches U+212A KELVIN SIGN and (?i)s U+017F LONG S in RE2;
        // and one literal is searched one way, exact or caseless.
        if ((caseless && (AsciiLower(c) == 'k' || AsciiLower(c) == 's')) ||
            (IsAsciiLetter(c) && HasLetter(lead.literal.text) &&
             lead.literal.caseless != caseless)) {
          lead.open = false;
          continue;
        }
        if (IsAsciiLetter(c)) lead.literal.caseless = caseless;
        lead.literal.text.push_back(c);
      }
      return AnyOpen(leads);
    }
    case ReNode::Kind::kEscape:
      // \b and \B consume nothing: the match still begins with what
      // follows. Anything else (\d, \A, \pL, ...) ends the literals.
      if (node.escape == 'b' || node.escape == 'B') return AnyOpen(leads);
      Close(leads);
      return false;
    default:
      Close(leads);
      return false;
  }
}

// `.`, or a class of every character but newline ([^\n]): a repeat of it
// runs along the line.
bool IsWildcard(const ReNode& node) {
  if (node.kind == ReNode::Kind::kAnyChar) return true;
  if (node.kind != ReNode::Kind::kClass || !node.negated || node.items.size() != 1) return false;
  const ReClassItem& item = node.items[0];
  return (item.kind == ReClassItem::Kind::kEscape && item.lo == 'n') ||
         (item.kind == ReClassItem::Kind::kChar && item.lo == '\n');
}

// Notes the wildcard repeats of `node` in `shape`; `tail`: nothing but
// `$` or flags may follow `node` in the pattern.
void NoteWildcards(const ReNode& node, bool tail, ConfirmShape& shape) {
  switch (node.kind) {
    case ReNode::Kind::kConcat:
      for (std::size_t i = 0; i < node.children.size(); ++i) {
        bool rest_empty = true;
        for (std::size_t j = i + 1; j < node.children.size(); ++j) {
          const ReNode::Kind k = node.children[j].kind;
          rest_empty = rest_empty && (k == ReNode::Kind::kEndLine || k == ReNode::Kind::kFlags);
        }
        NoteWildcards(node.children[i], tail && rest_empty, shape);
      }
      return;
    case ReNode::Kind::kAlternation:
    case ReNode::Kind::kGroup:
      for (const ReNode& child : node.children) NoteWildcards(child, tail, shape);
      return;
    case ReNode::Kind::kRepeat:
      if ((node.op == '*' || node.op == '+') && IsWildcard(node.children[0])) {
        shape.wildcard = true;
        if (!node.lazy && !tail) shape.greedy_wildcard_inside = true;
      }
      for (const ReNode& child : node.children) NoteWildcards(child, false, shape);
      return;
    default:
      return;
  }
}

std::vector<LeadingLiteral> LeadsOf(const ReNode& tree, Walk& walk) {
  std::vector<Lead> leads(1);
  Extend(tree, walk, leads);
  std::vector<LeadingLiteral> out;
  for (Lead& lead : leads) {
    if (lead.literal.text.empty()) return {};  // a match may begin anywhere
    out.push_back(std::move(lead.literal));
  }
  // A literal that begins with another (searched the same way), or is one
  // already kept, adds no position to try: `bond[\w.-]*: link` is "bond" alone, not also
  // "bond: link".
  std::vector<LeadingLiteral> kept;
  for (const LeadingLiteral& l : out) {
    const bool longer = std::any_of(out.begin(), out.end(), [&](const LeadingLiteral& o) {
      return &o != &l && o.caseless == l.caseless && o.text.size() < l.text.size() &&
             l.text.compare(0, o.text.size(), o.text) == 0;
    });
    const bool again = std::any_of(kept.begin(), kept.end(),
                                   [&](const LeadingLiteral& k) { return SameLiteral(k, l); });
    if (!longer && !again) kept.push_back(l);
  }
  return kept;
}

// Optional items read through where that stays within kMaxLeadingLiterals
// (`(?:GPU\d+ )?RmInitAdapter` begins with "GPU" or "RmInitAdapter"); a
// pattern of many optional items in many branches would exceed it, and is
// read with each optional item closing its literals instead.
std::vector<LeadingLiteral> LeadsOf(const ReNode& tree) {
  Walk walk;
  std::vector<LeadingLiteral> leads = LeadsOf(tree, walk);
  if (!leads.empty() || !walk.overflowed) return leads;
  Walk closing{.optionals = false};
  return LeadsOf(tree, closing);
}

bool HasEscape(const ReNode& node) {
  if (node.kind == ReNode::Kind::kEscape) return true;
  return std::any_of(node.children.begin(), node.children.end(), HasEscape);
}

// Extend over the whole tree: complete, every literal non-empty, and no
// \b or \B (which Extend steps over) anywhere.
std::vector<LeadingLiteral> WholeLiteralsOf(const ReNode& tree) {
  if (HasEscape(tree)) return {};
  std::vector<Lead> leads(1);
  Walk walk;
  Extend(tree, walk, leads);
  std::vector<LeadingLiteral> out;
  for (Lead& lead : leads) {
    // A closed literal is where the walk stopped: more pattern follows it.
    if (!lead.open || lead.literal.text.empty()) return {};
    out.push_back(std::move(lead.literal));
  }
  return out;
}

ConfirmShape ShapeOf(const ReNode& tree) {
  ConfirmShape shape;
  NoteWildcards(tree, true, shape);
  return shape;
}

}  // namespace

ConfirmShape ConfirmShapeOf(std::string_view pattern) {
  std::string why;
  const std::optional<ReNode> tree = ParseRe2(pattern, &why);
  return tree ? ShapeOf(*tree) : ConfirmShape{};
}

std::vector<LeadingLiteral> WholeLiterals(std::string_view pattern) {
  std::string why;
  const std::optional<ReNode> tree = ParseRe2(pattern, &why);
  return tree ? WholeLiteralsOf(*tree) : std::vector<LeadingLiteral>{};
}

std::vector<LeadingLiteral> LeadingLiterals(std::string_view pattern) {
  std::string why;
  const std::optional<ReNode> tree = ParseRe2(pattern, &why);
  return tree ? LeadsOf(*tree) : std::vector<LeadingLiteral>{};
}

namespace {

// RE2's leftmost-first match anchored at p, with its groups, asked in `order`.
bool MatchAt(const RE2& re, const re2::StringPiece& whole, std::size_t p, re2::StringPiece* groups,
             int n, ConfirmOrder order) {
  if (order != ConfirmOrder::kSpanFirst || n == 1) {
    return re.Match(whole, p, whole.size(), RE2::ANCHOR_START, groups, n);
  }
  // One group: RE2 runs its forward DFA alone and says where the match
  // ends. The match anchored at both ends of that span is the same match
  // (the one of highest priority among those that end there), and RE2
  // reads the text around the span as context for \b and $.
  if (!re.Match(whole, p, whole.size(), RE2::ANCHOR_START, groups, 1)) return false;
  const auto end = static_cast<std::size_t>(groups[0].data() + groups[0].size() - whole.data());
  if (re.Match(whole, p, end, RE2::ANCHOR_BOTH, groups, n)) return true;
  // Not reached (RE2 finds its groups this way itself after an unanchored
  // DFA pass); were it, the groups at once still give RE2's answer.
  return re.Match(whole, p, whole.size(), RE2::ANCHOR_START, groups, n);
}

}  // namespace

bool MatchAtLeadingLiterals(const RE2& re, const std::vector<LeadingLiteral>& leads,
                            std::string_view text, re2::StringPiece* groups, int n,
                            ConfirmOrder order) {
  const re2::StringPiece whole(text.data(), text.size());
  if (leads.empty() || leads.size() > kMaxLeadingLiterals) {
    return re.Match(whole, 0, text.size(), RE2::UNANCHORED, groups, n);
  }
  // The next occurrence of each literal; the smallest is the next position.
  std::array<std::size_t, kMaxLeadingLiterals> next{};
  const std::size_t count = leads.size();
  for (std::size_t i = 0; i < count; ++i) {
    next[i] = FindLiteral(text, leads[i].text, leads[i].caseless);
  }
  if (order == ConfirmOrder::kRejectFirst) {
    // No match starts before the first occurrence: none from there, none
    // at all. RE2 reads the bytes before it as context (\b, ^).
    const std::size_t first = *std::min_element(next.begin(), next.begin() + count);
    if (first == std::string_view::npos) return false;
    if (!re.Match(whole, first, text.size(), RE2::UNANCHORED, nullptr, 0)) return false;
  }
  for (std::size_t attempts = 0;; ++attempts) {
    const std::size_t p = *std::min_element(next.begin(), next.begin() + count);
    if (p == std::string_view::npos) return false;
    // Each failed attempt may read the rest of the line ("Xid.*?: ..." on a
    // line of "Xid: " repeated): past a few, RE2's unanchored search, linear
    // in the line, bounds the cost (64 KiB took 0.5 s, uncapped). From p:
    // no match starts before it (no literal there, or an attempt failed).
    if (attempts == kMaxAnchoredAttempts) {
      return re.Match(whole, p, text.size(), RE2::UNANCHORED, groups, n);
    }
    // `whole` from p: RE2 sees the bytes before p as context (\b, ^).
    if (MatchAt(re, whole, p, groups, n, order)) return true;
    for (std::size_t i = 0; i < count; ++i) {
      if (next[i] == p) next[i] = FindLiteral(text, leads[i].text, leads[i].caseless, p + 1);
    }
  }
}

namespace {

// False when `pattern` surely holds more than literals: a wildcard, class,
// repeat, anchor or escape (a '?' only after '(' for a group's flags).
// Parsing costs ~38,000 instructions a pattern, this a few per byte.
bool MayBeOnlyLiterals(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '?' && (i == 0 || pattern[i - 1] != '(')) return false;
    if (std::string_view(".[]*+{}^$\\").find(c) != std::string_view::npos) return false;
  }
  return true;
}

}  // namespace

void AnchoredCapture::Init(const RE2& re, bool groups) const {
  // An acquire load first: std::call_once itself costs a call and
  // thread-local bookkeeping on every line (libstdc++).
  if (ready_.load(std::memory_order_acquire)) return;
  std::call_once(once_, [&] {
    // Only what this rule's calls use: most rules without groups are
    // read no further than MayBeOnlyLiterals.
    if (groups || MayBeOnlyLiterals(re.pattern())) {
      std::string why;
      const std::optional<ReNode> tree = ParseRe2(re.pattern(), &why);
      if (tree && groups) {
        leads_ = LeadsOf(*tree);
        if (!leads_.empty()) shape_ = ShapeOf(*tree);
      } else if (tree) {
        whole_ = WholeLiteralsOf(*tree);
      }
    }
    ready_.store(true, std::memory_order_release);
  });
}

bool AnchoredCapture::Match(const RE2& re, std::string_view text, re2::StringPiece* groups,
                            int n) const {
  Init(re, true);
  if (leads_.empty()) return MatchAtLeadingLiterals(re, leads_, text, groups, n);
  const bool matched = MatchAtLeadingLiterals(re, leads_, text, groups, n, NextOrder());
  if (shape_.wildcard && !shape_.greedy_wildcard_inside) Count(matched);
  return matched;
}

bool AnchoredCapture::Matches(const RE2& re, std::string_view text) const {
  Init(re, false);
  if (whole_.empty()) {
    return re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED,
                    nullptr, 0);
  }
  return std::any_of(whole_.begin(), whole_.end(), [&](const LeadingLiteral& l) {
    return FindLiteral(text, l.text, l.caseless) != std::string_view::npos;
  });
}

ConfirmOrder AnchoredCapture::NextOrder() const {
  if (shape_.greedy_wildcard_inside) return ConfirmOrder::kSpanFirst;
  if (!shape_.wildcard) return ConfirmOrder::kGroupsAtOnce;
  const std::uint32_t asked = asked_.load(std::memory_order_relaxed);
  const std::uint32_t matched = matched_.load(std::memory_order_relaxed);
  // At a third of lines matching (user-gpu's `Xid.*?: (?P<code>\d+),`) the
  // DFA first took 6,200 instructions a line to 3,300; at all of them it
  // added ~1,000 a line.
  return asked >= kMinCountedLines && 2 * matched < asked ? ConfirmOrder::kRejectFirst
                                                          : ConfirmOrder::kGroupsAtOnce;
}

void AnchoredCapture::Count(bool matched) const {
  // Loads and stores, not read-modify-writes: no locked instruction per
  // line, and a count lost to a race only delays a change of order.
  std::uint32_t asked = asked_.load(std::memory_order_relaxed) + 1;
  std::uint32_t hits = matched_.load(std::memory_order_relaxed) + (matched ? 1 : 0);
  if (asked >= (std::uint32_t{1} << 16)) {
    asked /= 2;
    hits /= 2;
  }
  asked_.store(asked, std::memory_order_relaxed);
  matched_.store(hits, std::memory_order_relaxed);
}

}  // namespace faultline
