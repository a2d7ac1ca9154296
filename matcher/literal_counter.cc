// SPDX-License-Identifier: Apache-2.0
// LiteralCounter: the literals are grouped by their first 3 bytes, folded to
// lower case, in an open-addressing table. One pass over the text keeps the
// folded 3 bytes ending at each position in a register (one table load a
// byte) and looks them up; the usual position (no literal starts so) costs a
// multiply and one probe of an empty slot, a hit compares whole literals.
// Literals of 1 or 2 bytes (the sampler's are 3 or more) are found by a
// plain search each.
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
constexpr std::uint32_t kKeyMask = 0xFFFFFF;

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

LiteralCounter::LiteralCounter(const std::vector<RequiredLiteral>& literals) : literals_(literals) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;  // (key, id)
  for (std::size_t id = 0; id < literals_.size(); ++id) {
    const std::string& text = literals_[id].text;
    if (text.size() >= kKeyBytes) {
      keyed.emplace_back(KeyOf(text), static_cast<std::uint32_t>(id));
    } else if (!text.empty()) {
      short_ids_.push_back(static_cast<std::uint32_t>(id));
    }
  }
  std::sort(keyed.begin(), keyed.end());
  std::size_t keys = 0;
  for (std::size_t i = 0; i < keyed.size(); ++i)
    keys += i == 0 || keyed[i].first != keyed[i - 1].first;
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
  if (!by_key_.empty() && text.size() >= kKeyBytes) {
    std::uint32_t key = (std::uint32_t{Fold(begin[0])} << 8) | Fold(begin[1]);
    for (const char* p = begin + kKeyBytes - 1; p < end; ++p) {
      key = ((key << 8) | Fold(*p)) & kKeyMask;
      const Bucket& bucket = buckets_[SlotOf(key)];
      if (bucket.key == kNoKey) continue;
      const char* start = p - (kKeyBytes - 1);
      for (std::uint32_t k = bucket.begin; k < bucket.end; ++k) {
        const std::uint32_t id = by_key_[k];
        count[id] += MatchesAt(id, start, end);
      }
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
