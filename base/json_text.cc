// SPDX-License-Identifier: Apache-2.0
#include "base/json_text.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace faultline {
namespace {

// Bytes that are copied as they are: printable ASCII other than `"` and `\`.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// True when none of the 8 bytes of `v` needs more than a copy: each is at
// least 0x20, below 0x80, and neither '"' nor '\\' (the classic "has a zero
// byte" trick on v, v ^ '"' and v ^ '\\'). Checking 8 bytes at a time
// halves the cost of the run loop on log lines, which are mostly plain.
bool AllPlain8(std::uint64_t v) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
  const std::uint64_t below_space = (v - kOnes * 0x20) & ~v & kHighs;
  const std::uint64_t bad =
      below_space | (v & kHighs) | has_zero(v ^ (kOnes * '"')) | has_zero(v ^ (kOnes * '\\'));
  return bad == 0;
}

#if defined(__SSE2__)
// The bytes of the 16 in `v` that need more than a copy, a bit each (bit k:
// byte k): a signed compare with 0x20 flags both the control bytes and every
// byte from 0x80 (negative as signed).
unsigned BadBytes16(__m128i v) {
  const __m128i bad = _mm_or_si128(
      _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return static_cast<unsigned>(_mm_movemask_epi8(bad));
}
#endif

// The end of the run of plain bytes of `text` from `i`.
std::size_t PlainRunEnd(std::string_view text, std::size_t i) {
#if defined(__SSE2__)
  // 16 bytes at a time (SSE2 is baseline x86-64), and the first byte to
  // escape found exactly.
  while (i + 16 <= text.size()) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const unsigned mask = BadBytes16(v);
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
    i += 16;
  }
#endif
  while (i + 8 <= text.size()) {
    std::uint64_t v;
    std::memcpy(&v, text.data() + i, sizeof(v));
    if (!AllPlain8(v)) break;
    i += 8;
  }
  while (i < text.size() && kPlain[static_cast<unsigned char>(text[i])]) ++i;
  return i;
}

}  // namespace

Utf8Prefix ScanUtf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = byte(0);
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {0, false};
  }
  std::size_t i = 1;
  for (; i < n && i < text.size(); ++i) {
    const unsigned char b = byte(i);
    if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return {i, false};
  }
  return {i, i == n};
}

namespace {

// WriteJsonString for a text of 4 to 32 plain bytes (most captures, keys
// and line numbers, the event id; three to ten of them an event) as two
// words that overlap, each checked and stored whole; nullptr for any other
// text. Through the
// general loop, its calls and its copy, a short string cost ~80
// instructions more (callgrind, subset-a's 10% corpus; bench/README.md).
char* WriteShortPlainJsonString(char* p, std::string_view text) {
  const std::size_t n = text.size();
#if defined(__SSE2__)
  if (n > 16 && n <= 32) {
    // 17 to 32 bytes (an event id, a rule id, most summaries' captures):
    // two 16-byte words.
    const char* const d = text.data();
    const __m128i first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d));
    const __m128i last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + n - 16));
    if ((BadBytes16(first) | BadBytes16(last)) != 0) return nullptr;
    *p = '"';
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 1), first);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 1 + n - 16), last);
    p[n + 1] = '"';
    return p + n + 2;
  }
#endif
  if (n < 4 || n > 16) return nullptr;
  if (n >= 8) {
    std::uint64_t first, last;
    std::memcpy(&first, text.data(), sizeof(first));
    std::memcpy(&last, text.data() + n - 8, sizeof(last));
    if (!AllPlain8(first) || !AllPlain8(last)) return nullptr;
    *p = '"';
    std::memcpy(p + 1, &first, sizeof(first));
    std::memcpy(p + 1 + n - 8, &last, sizeof(last));
  } else {
    std::uint32_t first, last;
    std::memcpy(&first, text.data(), sizeof(first));
    std::memcpy(&last, text.data() + n - 4, sizeof(last));
    if (!AllPlain8(std::uint64_t{last} << 32 | first)) return nullptr;
    *p = '"';
    std::memcpy(p + 1, &first, sizeof(first));
    std::memcpy(p + 1 + n - 4, &last, sizeof(last));
  }
  p[n + 1] = '"';
  return p + n + 2;
}

}  // namespace

char* WriteJsonString(char* p, std::string_view text) {
  if (char* end = WriteShortPlainJsonString(p, text)) return end;
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  static constexpr char kHex[] = "0123456789abcdef";
  const auto put = [&p](std::string_view piece) {
    std::memcpy(p, piece.data(), piece.size());
    p += piece.size();
  };
  *p++ = '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t run = PlainRunEnd(text, i);
    put(text.substr(i, run - i));
    i = run;
    if (i == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      *p++ = '\\';
      switch (c) {
        case '"':
          *p++ = '"';
          break;
        case '\\':
          *p++ = '\\';
          break;
        case '\b':
          *p++ = 'b';
          break;
        case '\t':
          *p++ = 't';
          break;
        case '\n':
          *p++ = 'n';
          break;
        case '\f':
          *p++ = 'f';
          break;
        case '\r':
          *p++ = 'r';
          break;
        default: {
          const char escape[] = {'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
          put(std::string_view(escape, sizeof(escape)));
        }
      }
      ++i;
      continue;
    }
    const Utf8Prefix prefix = ScanUtf8(text.substr(i));
    put(prefix.complete ? text.substr(i, prefix.length) : kReplacement);
    i += prefix.length > 0 ? prefix.length : 1;
  }
  *p++ = '"';
  return p;
}

void AppendJsonString(std::string& out, std::string_view text) {
  // Room for the worst case, then cut to what was written: one resize
  // instead of a capacity check per piece.
  const std::size_t old = out.size();
  out.resize(old + JsonStringBound(text.size()));
  char* const end = WriteJsonString(out.data() + old, text);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

void AppendJsonNumber(std::string& out, std::uint64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

void AppendJsonNumber(std::string& out, std::int64_t value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

}  // namespace faultline
