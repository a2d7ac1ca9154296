// SPDX-License-Identifier: Apache-2.0
#include "matcher/count_newlines.h"

#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace faultline {
namespace {

// Number of '\n' bytes in [p, end), portable: SSE2 (baseline x86-64)
// compares 16 bytes at a time and sums the hits per byte lane; elsewhere
// (arm64) eight bytes at a time with SWAR.
std::uint64_t CountNewlinesPortable(const char* p, const char* end) {
  std::uint64_t n = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    // At most 255 rounds per lane before the byte counters could wrap.
    const std::ptrdiff_t rounds = std::min<std::ptrdiff_t>((end - p) / 16, 255);
    __m128i acc = _mm_setzero_si128();
    for (std::ptrdiff_t i = 0; i < rounds; ++i, p += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));  // +1 per newline, per lane
    }
    __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    n += static_cast<std::uint64_t>(_mm_cvtsi128_si64(sums)) +
         static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  constexpr std::uint64_t kNl = 0x0a0a0a0a0a0a0a0aULL, kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  while (end - p >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    v ^= kNl;  // a newline byte becomes 0
    std::uint64_t t = (v & kLow7) + kLow7;
    t = ~(t | v | kLow7);  // high bit set exactly where the byte was 0
    // Sum the per-byte 0/1 flags with one multiply (no popcnt instruction
    // is assumed).
    n += ((t >> 7) * 0x0101010101010101ULL) >> 56;
    p += 8;
  }
  for (; p < end; ++p) n += (*p == '\n');
  return n;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same with AVX2, 64 bytes per round (two loads, four counters' worth
// of lanes): the counting runs over every byte of a scanned buffer (for
// line numbers), so it is worth twice the speed where the CPU has AVX2.
__attribute__((target("avx2"))) std::uint64_t CountNewlinesAvx2(const char* p, const char* end) {
  std::uint64_t n = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  while (end - p >= 64) {
    const std::ptrdiff_t rounds = std::min<std::ptrdiff_t>((end - p) / 64, 255);
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    for (std::ptrdiff_t i = 0; i < rounds; ++i, p += 64) {
      __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
      acc0 = _mm256_sub_epi8(acc0, _mm256_cmpeq_epi8(a, nl));
      acc1 = _mm256_sub_epi8(acc1, _mm256_cmpeq_epi8(b, nl));
    }
    __m256i sums = _mm256_add_epi64(_mm256_sad_epu8(acc0, _mm256_setzero_si256()),
                                    _mm256_sad_epu8(acc1, _mm256_setzero_si256()));
    n += static_cast<std::uint64_t>(_mm256_extract_epi64(sums, 0)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(sums, 1)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(sums, 2)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(sums, 3));
  }
  return n + CountNewlinesPortable(p, end);
}

using CountFn = std::uint64_t (*)(const char*, const char*);
CountFn PickCountNewlines() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? &CountNewlinesAvx2 : &CountNewlinesPortable;
}
const CountFn kCountNewlines = PickCountNewlines();
}  // namespace

std::uint64_t CountNewlines(const char* p, const char* end) { return kCountNewlines(p, end); }
#else
}  // namespace

std::uint64_t CountNewlines(const char* p, const char* end) {
  return CountNewlinesPortable(p, end);
}
#endif

}  // namespace faultline
