// SPDX-License-Identifier: Apache-2.0
#include "matcher/find_literal.h"

#include <cstdint>
#include <cstring>

#include "matcher/ascii.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace faultline {
namespace {

bool EqualAt(const char* at, std::string_view needle, bool caseless) {
  if (!caseless) return std::memcmp(at, needle.data(), needle.size()) == 0;
  for (std::size_t i = 0; i < needle.size(); ++i) {
    if (AsciiLower(at[i]) != AsciiLower(needle[i])) return false;
  }
  return true;
}

std::size_t FindBytewise(std::string_view hay, std::string_view needle, bool caseless,
                         std::size_t from) {
  for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
    if (EqualAt(hay.data() + i, needle, caseless)) return i;
  }
  return std::string_view::npos;
}

#if defined(__SSE2__)
// The bytes equal to `c`, or in either case when it is a letter and the
// search is caseless.
struct ByteMatcher {
  __m128i a, b;
  ByteMatcher(char c, bool caseless)
      : a(_mm_set1_epi8(caseless ? AsciiLower(c) : c)),
        b(_mm_set1_epi8(caseless ? AsciiUpper(c) : c)) {}
  __m128i Match(__m128i v) const {
    return _mm_or_si128(_mm_cmpeq_epi8(v, a), _mm_cmpeq_epi8(v, b));
  }
};
#endif

}  // namespace

std::size_t FindLiteral(std::string_view hay, std::string_view needle, bool caseless,
                        std::size_t from) {
  if (needle.empty()) return from <= hay.size() ? from : std::string_view::npos;
  if (from > hay.size() || hay.size() - from < needle.size()) return std::string_view::npos;
  std::size_t i = from;
#if defined(__SSE2__)
  // 16 start positions at a time: those whose first and last byte both
  // match the needle's (two compares and an AND, SSE2 being baseline
  // x86-64); only those are compared in full. On log lines the pair
  // rarely matches by chance, so most blocks cost four instructions.
  const std::size_t last = needle.size() - 1;
  const ByteMatcher first_byte(needle.front(), caseless);
  const ByteMatcher last_byte(needle.back(), caseless);
  // The start positions of 16 bytes from `at` whose first and last byte match.
  auto candidates = [&](std::size_t at) {
    const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hay.data() + at));
    const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hay.data() + at + last));
    return static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(first_byte.Match(head), last_byte.Match(tail))));
  };
  // The first of `mask`'s positions (from `at`) where the whole needle is.
  auto first_equal = [&](std::size_t at, unsigned mask) {
    for (; mask != 0; mask &= mask - 1) {
      const std::size_t p = at + static_cast<std::size_t>(__builtin_ctz(mask));
      if (EqualAt(hay.data() + p, needle, caseless)) return p;
    }
    return std::string_view::npos;
  };
  for (; i + last + 16 <= hay.size(); i += 16) {
    if (const std::size_t p = first_equal(i, candidates(i)); p != std::string_view::npos) return p;
  }
  // The last (fewer than 16) start positions: one more block, ending where
  // the last one may start, with the positions before `i` (already
  // searched, or before `from`) masked off. Byte by byte they cost a
  // compare loop each: most of a short line's search.
  if (hay.size() >= last + 16) {
    if (i + last >= hay.size()) return std::string_view::npos;  // none left
    const std::size_t at = hay.size() - last - 16;              // < i, as the loop ended
    return first_equal(at, candidates(at) & (~0u << (i - at)));
  }
#endif
  return FindBytewise(hay, needle, caseless, i);
}

}  // namespace faultline
