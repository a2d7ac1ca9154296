// SPDX-License-Identifier: Apache-2.0
// LiteralCounter: the text is read 2 bytes at a time. Every literal of 3
// bytes or more holds its bytes 0-1 and 1-2, and of a start s and s+1 one is
// even, so each start s is seen exactly once: at the pair at s when s is
// even (the literal's bytes 0-1 there), at the pair at s+1 when s is odd
// (its bytes 1-2). A 64 KiB table of which pairs (in every letter case a
// caseless literal allows) are which bytes of some literal rejects most
// pairs for a load, a table load and a branch: ~3 instructions a byte. A
// start it lets through is tested against a bitmap of hashes of the
// literals' first 3 bytes (in every case allowed), and one that passes
// that looks up the literals whose first 3 bytes, folded
// to lower case, are the text's there (an open-addressing table) and
// compares each whole. Literals of 1 or 2 bytes (the sampler's are 3 or
// more) are found by a plain search each.
#include "matcher/literal_counter.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace faultline {
namespace {

constexpr std::array<unsigned char, 256> kFold = [] {
  std::array<unsigned char, 256> fold{};
  for (int c = 0; c < 256; ++c) {
    fold[c] = static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  }
  return fold;
}();

unsigned char Fold(char c) { return kFold[static_cast<unsigned char>(c)]; }

constexpr std::size_t kKeyBytes = 3;
// Bits of LiteralCounter's pair table: a literal's bytes 0-1, its bytes 1-2.
constexpr std::uint8_t kHead = 1;
constexpr std::uint8_t kSecond = 2;

std::size_t Pair(const char* p) {
  return static_cast<unsigned char>(p[0]) | (std::size_t{static_cast<unsigned char>(p[1])} << 8);
}

// A hash of the 3 bytes at `p` as they are (not folded), to kTripleBits bits.
constexpr int kTripleBits = 16;
std::size_t Triple(const char* p) {
  std::uint32_t w = 0;
  std::memcpy(&w, p, kKeyBytes);
  return (w * 0x9E3779B1u) >> (32 - kTripleBits);
}

// The byte `c` and, for a caseless literal's letter, its other case.
std::vector<unsigned char> Cases(char c, bool caseless) {
  const auto b = static_cast<unsigned char>(c);
  const unsigned char lower = kFold[b];
  if (!caseless || lower < 'a' || lower > 'z') return {b};
  return {lower, static_cast<unsigned char>(lower - ('a' - 'A'))};
}

std::uint32_t KeyOf(std::string_view text) {
  return (std::uint32_t{Fold(text[0])} << 16) | (std::uint32_t{Fold(text[1])} << 8) | Fold(text[2]);
}

bool CaselessEqual(const char* a, const char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (Fold(a[i]) != Fold(b[i])) return false;
  }
  return true;
}

}  // namespace

LiteralCounter::LiteralCounter(const std::vector<RequiredLiteral>& literals)
    : literals_(literals),
      pairs_(std::size_t{1} << 16, 0),
      triples_((std::size_t{1} << kTripleBits) / 64, 0) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;  // (key, id)
  for (std::size_t id = 0; id < literals_.size(); ++id) {
    const std::string& text = literals_[id].text;
    if (text.size() >= kKeyBytes) {
      keyed.emplace_back(KeyOf(text), static_cast<std::uint32_t>(id));
      const bool caseless = literals_[id].caseless;
      for (unsigned char a : Cases(text[0], caseless)) {
        for (unsigned char b : Cases(text[1], caseless)) {
          for (unsigned char c : Cases(text[2], caseless)) {
            const std::array<char, kKeyBytes> bytes = {static_cast<char>(a), static_cast<char>(b),
                                                       static_cast<char>(c)};
            const std::size_t t = Triple(bytes.data());
            triples_[t / 64] |= std::uint64_t{1} << (t % 64);
          }
        }
      }
      for (std::size_t at : {0, 1}) {
        for (unsigned char a : Cases(text[at], caseless)) {
          for (unsigned char b : Cases(text[at + 1], caseless)) {
            pairs_[a | (std::size_t{b} << 8)] |= at == 0 ? kHead : kSecond;
          }
        }
      }
    } else if (!text.empty()) {
      short_ids_.push_back(static_cast<std::uint32_t>(id));
    }
  }
  std::sort(keyed.begin(), keyed.end());
  std::size_t keys = 0;
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    keys += i == 0 || keyed[i].first != keyed[i - 1].first;
  }
  while ((std::size_t{1} << bucket_bits_) < 4 * keys) ++bucket_bits_;
  buckets_.resize(std::size_t{1} << bucket_bits_);
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    const std::uint32_t key = keyed[i].first;
    Bucket& bucket = buckets_[SlotOf(key)];
    if (bucket.key == kNoKey) {
      bucket.key = key;
      bucket.begin = static_cast<std::uint32_t>(by_key_.size());
    }
    by_key_.push_back(keyed[i].second);
    bucket.end = static_cast<std::uint32_t>(by_key_.size());
  }
}

// The slot of `key`'s bucket, or of the empty one where it would go.
std::size_t LiteralCounter::SlotOf(std::uint32_t key) const {
  const std::size_t mask = buckets_.size() - 1;
  std::size_t i = static_cast<std::size_t>((key * 0x9E3779B1u) >> (32 - bucket_bits_));
  while (buckets_[i].key != kNoKey && buckets_[i].key != key) i = (i + 1) & mask;
  return i;
}

bool LiteralCounter::MatchesAt(std::uint32_t id, const char* p, const char* end) const {
  const RequiredLiteral& lit = literals_[id];
  const std::size_t n = lit.text.size();
  if (static_cast<std::size_t>(end - p) < n) return false;
  // The folded key matched: a caseless literal needs the rest in any case,
  // a plain one every byte as it is.
  if (lit.caseless) return CaselessEqual(p + kKeyBytes, lit.text.data() + kKeyBytes, n - kKeyBytes);
  return std::memcmp(p, lit.text.data(), n) == 0;
}

std::vector<std::uint64_t> LiteralCounter::Count(std::string_view text) const {
  std::vector<std::uint64_t> count(literals_.size(), 0);
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  if (!by_key_.empty()) {
    auto count_at = [&](const char* start) {
      const std::size_t t = Triple(start);
      if (((triples_[t / 64] >> (t % 64)) & 1) == 0) return;
      const Bucket& bucket = buckets_[SlotOf(KeyOf(std::string_view(start, kKeyBytes)))];
      for (std::uint32_t k = bucket.begin; k < bucket.end; ++k) {
        const std::uint32_t id = by_key_[k];
        count[id] += MatchesAt(id, start, end);
      }
    };
    // Pairs at even offsets; a start needs 3 bytes, so none past size - 3.
    for (std::size_t q = 0; q + kKeyBytes <= text.size() + 1; q += 2) {
      const std::uint8_t bits = pairs_[Pair(begin + q)];
      if (bits == 0) continue;
      if ((bits & kHead) && q + kKeyBytes <= text.size()) count_at(begin + q);
      if ((bits & kSecond) && q > 0) count_at(begin + q - 1);
    }
  }
  for (std::uint32_t id : short_ids_) {
    const RequiredLiteral& lit = literals_[id];
    for (const char* p = begin; p + lit.text.size() <= end; ++p) {
      count[id] += lit.caseless ? CaselessEqual(p, lit.text.data(), lit.text.size())
                                : std::memcmp(p, lit.text.data(), lit.text.size()) == 0;
    }
  }
  return count;
}

}  // namespace faultline
