// SPDX-License-Identifier: Apache-2.0
// CutAtRarestKeys: every 8-byte window of the literals is counted in the
// sample in one pass, then each literal is cut after its rarest window.
#include "matcher/literal_keys.h"

#include <cstdint>
#include <cstring>

namespace faultline {
namespace {

std::uint64_t Word(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// Occurrences in a text of a few thousand 8-byte words: an open-addressing
// table kept at most a quarter full, so that the usual text position (a
// word not in the table) costs a multiply and one probe of an empty slot.
class WordCounter {
 public:
  explicit WordCounter(std::size_t words) {
    while ((std::size_t{1} << bits_) < 4 * words) ++bits_;
    slots_.resize(std::size_t{1} << bits_);
  }

  // `word` must not be kEmpty.
  void Add(std::uint64_t word) { Find(word).word = word; }

  void CountIn(std::string_view text) {
    if (text.size() < sizeof(std::uint64_t)) return;
    const char* const last = text.data() + text.size() - sizeof(std::uint64_t);
    for (const char* p = text.data(); p <= last; ++p) {
      Slot& slot = Find(Word(p));
      if (slot.word != kEmpty) ++slot.count;  // eight newlines find an empty slot
    }
  }

  std::uint32_t count(std::uint64_t word) { return Find(word).count; }

 private:
  // Eight newlines: no literal holds one, so no window of a literal is this.
  static constexpr std::uint64_t kEmpty = 0x0a0a0a0a0a0a0a0aULL;
  struct Slot {
    std::uint64_t word = kEmpty;
    std::uint32_t count = 0;
  };

  // The slot of `word`, or the empty one where it would go.
  Slot& Find(std::uint64_t word) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>((word * 0x9E3779B97F4A7C15ULL) >> (64 - bits_));
    while (slots_[i].word != kEmpty && slots_[i].word != word) i = (i + 1) & mask;
    return slots_[i];
  }

  std::vector<Slot> slots_;
  int bits_ = 4;
};

bool Cuttable(const RequiredLiteral& lit) {
  return !lit.caseless && lit.text.size() > kVectorscanKeyBytes;
}

}  // namespace

std::vector<RequiredLiteral> CutAtRarestKeys(const std::vector<RequiredLiteral>& literals,
                                             std::string_view sample) {
  static_assert(kVectorscanKeyBytes == sizeof(std::uint64_t));
  std::size_t windows = 0;
  for (const RequiredLiteral& lit : literals) {
    if (Cuttable(lit)) windows += lit.text.size() - kVectorscanKeyBytes + 1;
  }
  std::vector<RequiredLiteral> out = literals;
  if (windows == 0) return out;
  WordCounter counter(windows);
  for (const RequiredLiteral& lit : literals) {
    if (!Cuttable(lit)) continue;
    for (std::size_t i = 0; i + kVectorscanKeyBytes <= lit.text.size(); ++i) {
      counter.Add(Word(lit.text.data() + i));
    }
  }
  counter.CountIn(sample);
  for (RequiredLiteral& lit : out) {
    if (!Cuttable(lit)) continue;
    std::size_t best = 0;
    std::uint32_t fewest = counter.count(Word(lit.text.data()));
    for (std::size_t i = 1; i + kVectorscanKeyBytes <= lit.text.size(); ++i) {
      const std::uint32_t n = counter.count(Word(lit.text.data() + i));
      if (n < fewest) {
        fewest = n;
        best = i;
      }
    }
    lit.text.resize(best + kVectorscanKeyBytes);
  }
  return out;
}

}  // namespace faultline
