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
  for (; i + last + 16 <= hay.size(); i += 16) {
    const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hay.data() + i));
    const __m128i tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hay.data() + i + last));
    unsigned mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(first_byte.Match(head), last_byte.Match(tail))));
    while (mask != 0) {
      const std::size_t at = i + static_cast<std::size_t>(__builtin_ctz(mask));
      if (EqualAt(hay.data() + at, needle, caseless)) return at;
      mask &= mask - 1;
    }
  }
#endif
  return FindBytewise(hay, needle, caseless, i);
}

}  // namespace faultline
