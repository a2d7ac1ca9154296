// SPDX-License-Identifier: Apache-2.0
// How often each of a few hundred literals occurs in a sample of the input:
// what the sampler (rule_sampling.cc) chooses each rule's literal set by.
// It was a Vectorscan database of those literals, whose compile
// (hs_compile_lit_multi of ~400 literals) cost 126 M instructions on the
// built-in packs, about a fifth of a 64 MiB scan; a table of the literals'
// first 3 bytes costs nearly nothing to build and a few instructions a byte
// to run over the sample's MiB (bench/README.md, round 4 "sampler").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// Immutable after construction; Count is thread-safe (it only reads).
class LiteralCounter {
 public:
  // `literals[i]` gets id i; any bytes, any length (an empty one occurs at
  // no position); a caseless one matches in any ASCII letter case, as
  // Vectorscan's HS_FLAG_CASELESS does.
  explicit LiteralCounter(const std::vector<RequiredLiteral>& literals);

  // Per id, the number of positions of `text` where the literal starts,
  // overlapping occurrences included ("aa" is twice in "aaa"): the number of
  // hits LiteralPrefilter::Scan reports for it on `text`.
  std::vector<std::uint64_t> Count(std::string_view text) const;

 private:
  struct Bucket {
    std::uint32_t key = kNoKey;  // the folded first 3 bytes of its literals
    std::uint32_t begin = 0;     // its literals' ids: by_key_[begin, end)
    std::uint32_t end = 0;
  };
  static constexpr std::uint32_t kNoKey = 0xFFFFFFFF;  // no 3-byte key is this

  std::size_t SlotOf(std::uint32_t key) const;
  bool MatchesAt(std::uint32_t id, const char* p, const char* end) const;

  std::vector<RequiredLiteral> literals_;
  std::vector<std::uint32_t> by_key_;  // ids of 3 bytes or more, grouped by key
  std::vector<Bucket> buckets_;        // open addressing, at most a quarter full
  int bucket_bits_ = 4;
  std::vector<std::uint32_t> short_ids_;  // ids of 1 or 2 bytes: searched one by one
  // Per 2 bytes (first | second << 8): kHead if they are some literal's
  // bytes 0-1, kSecond if some literal's bytes 1-2 (literal_counter.cc).
  std::vector<std::uint8_t> pairs_;
  // Bit per hash of 3 bytes (literal_counter.cc's Triple) that begin some
  // literal, in every letter case it allows.
  std::vector<std::uint64_t> triples_;
};

}  // namespace faultline
