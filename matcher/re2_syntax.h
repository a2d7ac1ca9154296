// SPDX-License-Identifier: Apache-2.0
// The one reader of RE2 pattern syntax in the project: ParseRe2() turns a
// rule's pattern into a tree, which both the ERE translator (ere_export.cc)
// and the required-literal extractor (literal_prefilter.cc) walk. The
// pieces below it (a group's opening, a counted repeat, ...) each take the
// pattern and the position where the piece starts, and return what it holds
// and the position after it, or nullopt when it is not well formed there.
//
// The tree keeps what either consumer needs to decide for itself what it
// can express: how an escape was spelt (\n or a newline byte), a flag group's
// flags, a class's items in order. Letter case is resolved as RE2 does: a
// "(?i)" holds for the rest of its group, across '|' too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// One item of a bracket expression, in the order written.
struct ReClassItem {
  enum class Kind : std::uint8_t {
    kChar,    // `lo`; `escaped` when written "\c" (punctuation)
    kRange,   // `lo`-`hi` (either end may have been escaped)
    kPosix,   // `text`, e.g. "[:alpha:]"
    kEscape,  // a backslash and the letter or digit `lo` (\d \S \n \t ...)
  };
  Kind kind = Kind::kChar;
  char lo = 0;
  char hi = 0;
  bool escaped = false;
  std::string_view text;
};

struct ReNode {
  enum class Kind : std::uint8_t {
    kAlternation,  // children: the branches, each a kConcat (one when no '|')
    kConcat,       // children in order
    kLiteral,      // the character `value` (a byte, or a code point from \x{...})
    kAnyChar,      // .
    kBeginLine,    // ^
    kEndLine,      // $
    kEscape,       // \d \w \s \b \A \z \p{..} ...: `escape` is the letter
    kClass,        // [...]: `negated`, `items`
    kFlags,        // (?flags) for the rest of the group: `flags`
    kGroup,        // (...), (?:...), (?P<name>...), (?flags:...): children[0]
    kRepeat,       // children[0] repeated: `op` is '*', '+', '?' or '{' (`counted`)
  };
  Kind kind = Kind::kConcat;
  long value = 0;
  // kLiteral: 0 when written as itself, else the character after the
  // backslash ('x' for a hex escape, 'Q' inside \Q...\E, the punctuation
  // itself for "\."). kEscape: the letter.
  char escape = 0;
  bool caseless = false;  // kLiteral, kClass: under (?i)
  bool negated = false;
  std::vector<ReClassItem> items;
  bool named = false;        // kGroup
  std::string_view flags;    // kFlags, kGroup (empty for a named or plain group)
  char op = 0;               // kRepeat
  bool lazy = false;         // kRepeat: non-greedy (a '?' after the quantifier)
  int min = 0;               // kRepeat: 0 for * and ?, 1 for +, n for {n,...}
  std::string_view counted;  // kRepeat '{': "n", "n," or "n,m"
  std::vector<ReNode> children;
};

// The tree of a pattern (a kAlternation), or nullopt with the reason in
// `why` ("missing ')'", "bad group", "trailing backslash", ...) when the
// pattern is not RE2 syntax this reader knows.
std::optional<ReNode> ParseRe2(std::string_view pattern, std::string* why);

}  // namespace faultline
