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

// Extends every literal of `leads` by what `node` matches first. Every
// match of the pattern so far begins with one of `leads`, before and after
// (cutting a literal short keeps that true, so any doubt stops the walk).
// True when all of `node` was followed: the caller may go on to the next
// item.
bool Extend(const ReNode& node, std::vector<LeadingLiteral>& leads) {
  switch (node.kind) {
    case ReNode::Kind::kAlternation: {
      if (node.children.size() == 1) return Extend(node.children[0], leads);
      // Each branch extends its own copy of the literals so far.
      std::vector<LeadingLiteral> all;
      bool complete = true;
      for (const ReNode& branch : node.children) {
        std::vector<LeadingLiteral> copy = leads;
        complete = Extend(branch, copy) && complete;
        all.insert(all.end(), copy.begin(), copy.end());
        if (all.size() > kMaxLeadingLiterals) return false;  // the literals so far stand
      }
      leads = std::move(all);
      return complete;
    }
    case ReNode::Kind::kConcat:
      for (const ReNode& child : node.children) {
        if (!Extend(child, leads)) return false;
      }
      return true;
    case ReNode::Kind::kGroup:
      // Whatever its flags: a literal records its own case (the only flag
      // that changes what a literal matches).
      return node.children.size() == 1 && Extend(node.children[0], leads);
    case ReNode::Kind::kFlags:
      return true;  // as for a group's flags
    case ReNode::Kind::kLiteral: {
      // RE2 reads the pattern as UTF-8: a code point past ASCII is more
      // than one byte, and a raw byte past ASCII is part of one.
      if (node.value <= 0 || node.value >= 0x80) return false;
      const char c = static_cast<char>(node.value);
      const bool caseless = node.caseless && IsAsciiLetter(c);
      // (?i)k matches U+212A KELVIN SIGN and (?i)s U+017F LONG S in RE2.
      if (caseless && (AsciiLower(c) == 'k' || AsciiLower(c) == 's')) return false;
      for (const LeadingLiteral& lead : leads) {
        if (IsAsciiLetter(c) && HasLetter(lead.text) && lead.caseless != caseless) {
          return false;  // one literal is searched one way
        }
      }
      for (LeadingLiteral& lead : leads) {
        if (IsAsciiLetter(c)) lead.caseless = caseless;
        lead.text.push_back(c);
      }
      return true;
    }
    case ReNode::Kind::kEscape:
      // \b and \B consume nothing: the match still begins with what
      // follows. Anything else (\d, \A, \pL, ...) ends the literals.
      return node.escape == 'b' || node.escape == 'B';
    default:
      return false;
  }
}

}  // namespace

std::vector<LeadingLiteral> LeadingLiterals(std::string_view pattern) {
  std::string why;
  const std::optional<ReNode> tree = ParseRe2(pattern, &why);
  if (!tree) return {};
  std::vector<LeadingLiteral> leads(1);
  Extend(*tree, leads);
  for (const LeadingLiteral& lead : leads) {
    if (lead.text.empty()) return {};  // a match may begin anywhere
  }
  return leads;
}

bool MatchAtLeadingLiterals(const RE2& re, const std::vector<LeadingLiteral>& leads,
                            std::string_view text, re2::StringPiece* groups, int n) {
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
    if (re.Match(whole, p, text.size(), RE2::ANCHOR_START, groups, n)) return true;
    for (std::size_t i = 0; i < count; ++i) {
      if (next[i] == p) next[i] = FindLiteral(text, leads[i].text, leads[i].caseless, p + 1);
    }
  }
}

bool AnchoredCapture::Match(const RE2& re, std::string_view text, re2::StringPiece* groups,
                            int n) const {
  std::call_once(once_, [&] { leads_ = LeadingLiterals(re.pattern()); });
  return MatchAtLeadingLiterals(re, leads_, text, groups, n);
}

}  // namespace faultline
