// SPDX-License-Identifier: Apache-2.0
// Pieces of RE2 syntax read the same way by both readers of rule patterns:
// the ERE translator (ere_export.cc) and the required-literal extractor
// (literal_prefilter.cc). Each takes the pattern and the position where the
// piece starts, and returns what it holds and the position after it, or
// nullopt when it is not well formed there.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace faultline {

// At `pos` just after "(?": a named group ("P<name>" or "<name>"), or flags
// ending at ':' (a group with those flags) or at ')' (flags for the rest of
// the enclosing sequence, as in "(?i)").
struct GroupOpen {
  bool named = false;
  std::string_view flags;         // empty for a named group
  bool rest_of_sequence = false;  // "(?flags)" rather than "(?flags:"
  std::size_t end = 0;            // after '>', ':' or ')'
};
std::optional<GroupOpen> ReadGroupOpen(std::string_view p, std::size_t pos);

// Whether matching is caseless after `flags` ("i" sets, "-i" clears) when it
// was `caseless` before.
bool CaselessAfter(std::string_view flags, bool caseless);

// At `pos` on '{': a counted repeat "{n}", "{n,}" or "{n,m}". RE2 reads any
// other '{' as a literal brace.
struct CountedRepeat {
  int min = 0;
  std::string_view body;  // "n", "n," or "n,m"
  std::size_t end = 0;    // after '}'
};
std::optional<CountedRepeat> ReadCountedRepeat(std::string_view p, std::size_t pos);

// At `pos` just after "\x": "hh" or "{h...}", the code point's value.
struct HexEscape {
  long value = 0;
  std::size_t end = 0;
};
std::optional<HexEscape> ReadHexEscape(std::string_view p, std::size_t pos);

// At `pos` just after "\Q": the quoted text, up to "\E" or the end.
struct Quoted {
  std::string_view text;
  std::size_t end = 0;  // after "\E", or the pattern's size
};
Quoted ReadQuoted(std::string_view p, std::size_t pos);

}  // namespace faultline
