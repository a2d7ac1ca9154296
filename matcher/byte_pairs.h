// SPDX-License-Identifier: Apache-2.0
// Two adjacent bytes every match of a pattern must hold, for the rules
// without a prefilter literal (W202): "\bE\d{4}\b" has no literal of three
// bytes, but each match holds 'E' and then a digit. One table of such byte
// pairs for all those rules marks the lines that may hold a match, at a few
// instructions a byte; RE2's search over all of a buffer costs several
// times that (matcher/unfiltered_search.h runs it on the marked lines only).
// Only matcher/ includes it.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace faultline {

// Which bytes may stand at one place of a match.
using ByteSet = std::bitset<256>;

// Every match of the pattern holds some a in `first` directly followed by
// some b in `second`, and then a byte of then[0], one of then[1], ..., for
// at least one of the pairs. `\bE\d{4}\b`: 'E', a digit, then three more
// (a pair alone, 'E' and a digit, marked a quarter of a real corpus's
// lines; with what follows, 0.04%).
struct BytePair {
  ByteSet first;
  ByteSet second;
  std::vector<ByteSet> then;
};

// Sets of pairs such that every match of `pattern` (RE2 syntax) holds one
// pair of each set: the choices of a search, at most four, the least
// frequent in log text first by a rough estimate (the search counts them
// in a sample of its input). Empty when none is known (a pattern of one
// character, or of classes as wide as \w\w).
std::vector<std::vector<BytePair>> BytePairChoices(std::string_view pattern);
// The first of them, or nullopt.
std::optional<std::vector<BytePair>> RequiredBytePairs(std::string_view pattern);

// The lines of a chunk that hold one of a set of byte pairs.
class BytePairLines {
 public:
  // Any pair whose second byte may be ':' also takes ']' first: a journal
  // line "ident[pid]: msg" is matched as "ident: msg" (unfiltered_search.cc).
  explicit BytePairLines(std::span<const BytePair> pairs);

  // Calls on_line(start, end) for each line of `chunk` (whole lines) that
  // holds one of the pairs, or starts with '{', or ends with ':' or holds
  // ":\r": among them the lines whose message is not a substring of the
  // line (unfiltered_search.cc's cases (a) and (b)). In order, each once;
  // an on_line that returns bool stops the walk by returning false.
  template <typename F>
  void ForEachLine(std::string_view chunk, F&& on_line) const;

 private:
  static unsigned Key(unsigned char a, unsigned char b) {
    return (static_cast<unsigned>(a) << 8) | b;
  }
  // Bit `key` of a table of 65,536 bits.
  static bool Bit(const std::vector<unsigned long long>& bits, unsigned key) {
    return (bits[key >> 6] >> (key & 63)) & 1;
  }
  static void SetBit(std::vector<unsigned long long>& bits, unsigned key) {
    bits[key >> 6] |= 1ULL << (key & 63);
  }
  // Whether a pair, and the bytes that must follow it, stand at p[i].
  bool Holds(const unsigned char* p, std::size_t i, std::size_t n) const {
    const unsigned key = Key(p[i], p[i + 1]);
    return Bit(table_, key) && (!Bit(checked_, key) || ThenHolds(key, p, i, n));
  }
  bool ThenHolds(unsigned key, const unsigned char* p, std::size_t i, std::size_t n) const;
  // The first i' >= i with a pair at p[i'], p[i' + 1]; n - 1 (or i, when
  // i >= n - 1) when there is none.
  std::size_t NextPair(const unsigned char* p, std::size_t i, std::size_t n) const;
  std::size_t NextPairBytewise(const unsigned char* p, std::size_t i, std::size_t n) const;
  std::size_t NextPairAvx2(const unsigned char* p, std::size_t i, std::size_t n) const;

  // Bit (a << 8 | b): the pair "ab" marks its line. 8 KiB.
  std::vector<unsigned long long> table_;
  // Bit (a << 8 | b): "ab" marks it only when one of then_[a << 8 | b]
  // follows (no pair at "ab" without bytes to follow).
  std::vector<unsigned long long> checked_;
  std::unordered_map<unsigned, std::vector<std::vector<ByteSet>>> then_;
  // The sift's tables: the pairs fall in up to 8 groups (a bit each) of
  // first bytes and the bytes that may follow them, each kept as the
  // nibbles of its bytes: a byte is in a group's first bytes when the
  // entries of first_low_ (by its low nibble) and first_high_ (by its high)
  // share the group's bit, and so for the second. 32 positions are sifted
  // at once, the pair table looked up only where both bytes may be a pair.
  void BuildSiftTables();
  std::array<unsigned char, 16> first_low_{};
  std::array<unsigned char, 16> first_high_{};
  std::array<unsigned char, 16> second_low_{};
  std::array<unsigned char, 16> second_high_{};
};

template <typename F>
void BytePairLines::ForEachLine(std::string_view chunk, F&& on_line) const {
  const char* const base = chunk.data();
  const auto* p = reinterpret_cast<const unsigned char*>(base);
  const std::size_t n = chunk.size();
  // Marks the line holding byte `at`; returns its end (its newline, or n).
  auto mark = [&](std::size_t at) {
    const void* before = at > 0 ? memrchr(base, '\n', at) : nullptr;
    const std::size_t start =
        before ? static_cast<std::size_t>(static_cast<const char*>(before) - base) + 1 : 0;
    const void* after = std::memchr(base + at, '\n', n - at);
    const std::size_t end =
        after ? static_cast<std::size_t>(static_cast<const char*>(after) - base) : n;
    if constexpr (std::is_same_v<std::invoke_result_t<F&, std::size_t, std::size_t>, bool>) {
      if (!on_line(start, end)) return n;
    } else {
      on_line(start, end);
    }
    return end;
  };
  if (n == 0) return;
  std::size_t i = 0;
  // The first line's '{' and the last line's ':' have no newline beside
  // them for the table's "\n{" and ":\n" to see.
  if (p[0] == '{') i = mark(0);
  while (i < n) {
    i = NextPair(p, i, n);
    if (i + 1 >= n) {
      const bool bare = p[n - 1] == ':' || (n > 1 && p[n - 1] == '\r' && p[n - 2] == ':');
      if (bare) mark(n - 1);
      return;
    }
    // "\n{" marks the next line; any other pair, its own.
    i = mark(p[i] == '\n' ? i + 1 : i);  // a newline: it may begin "\n{"
  }
}

}  // namespace faultline
