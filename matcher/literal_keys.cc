// SPDX-License-Identifier: Apache-2.0
// CutAtRarestKeys and CutAtRarestEnds: every 8-byte (4-byte) window of the
// literals is counted in the sample in one pass, then each literal is cut
// after its rarest window.
#include "matcher/literal_keys.h"

#include <cstdint>
#include <cstring>

namespace faultline {
namespace {

// The `width` (4 or 8) bytes at `p` as one word, zero-extended.
inline std::uint64_t Word(const char* p, std::size_t width) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, width);
  return w;
}

// Occurrences in a text of a few thousand words of `width` bytes: an
// open-addressing table kept at most a quarter full, so that the usual
// text position (a word not in the table) costs a multiply and one probe
// of an empty slot.
class WordCounter {
 public:
  WordCounter(std::size_t words, std::size_t width) : width_(width) {
    while ((std::size_t{1} << bits_) < 4 * words) ++bits_;
    slots_.resize(std::size_t{1} << bits_);
  }

  // `word` must not be kEmpty.
  void Add(std::uint64_t word) { Find(word).word = word; }

  void CountIn(std::string_view text) {
    if (width_ == 8) {
      CountWords<8>(text);
    } else {
      CountWords<4>(text);
    }
  }

  std::uint32_t count(std::uint64_t word) { return Find(word).count; }

 private:
  // Eight newlines: no literal holds one, so no word of a literal is this
  // (a 4-byte word has its high bytes 0).
  static constexpr std::uint64_t kEmpty = 0x0a0a0a0a0a0a0a0aULL;
  struct Slot {
    std::uint64_t word = kEmpty;
    std::uint32_t count = 0;
  };

  // The text's words of `kWidth` bytes (a constant: one load each).
  template <std::size_t kWidth>
  void CountWords(std::string_view text) {
    if (text.size() < kWidth) return;
    const char* const last = text.data() + text.size() - kWidth;
    for (const char* p = text.data(); p <= last; ++p) {
      Slot& slot = Find(Word(p, kWidth));
      if (slot.word != kEmpty) ++slot.count;  // newlines only find an empty slot
    }
  }

  // The slot of `word`, or the empty one where it would go.
  Slot& Find(std::uint64_t word) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>((word * 0x9E3779B97F4A7C15ULL) >> (64 - bits_));
    while (slots_[i].word != kEmpty && slots_[i].word != word) i = (i + 1) & mask;
    return slots_[i];
  }

  std::size_t width_;
  std::vector<Slot> slots_;
  int bits_ = 4;
};

bool Cuttable(const RequiredLiteral& lit) {
  return !lit.caseless && lit.text.size() > kVectorscanKeyBytes;
}

// Each cuttable literal cut after its rarest `width`-byte window in
// `sample` among those ending at its 8th byte or later (the first of
// equally rare ones).
std::vector<RequiredLiteral> CutAfterRarestWindow(const std::vector<RequiredLiteral>& literals,
                                                  std::string_view sample, std::size_t width) {
  const std::size_t first = kVectorscanKeyBytes - width;  // the first window's start
  std::size_t windows = 0;
  for (const RequiredLiteral& lit : literals) {
    if (Cuttable(lit)) windows += lit.text.size() - kVectorscanKeyBytes + 1;
  }
  std::vector<RequiredLiteral> out = literals;
  if (windows == 0) return out;
  WordCounter counter(windows, width);
  for (const RequiredLiteral& lit : literals) {
    if (!Cuttable(lit)) continue;
    for (std::size_t i = first; i + width <= lit.text.size(); ++i) {
      counter.Add(Word(lit.text.data() + i, width));
    }
  }
  counter.CountIn(sample);
  for (RequiredLiteral& lit : out) {
    if (!Cuttable(lit)) continue;
    std::size_t best = first;
    std::uint32_t fewest = counter.count(Word(lit.text.data() + first, width));
    for (std::size_t i = first + 1; i + width <= lit.text.size(); ++i) {
      const std::uint32_t n = counter.count(Word(lit.text.data() + i, width));
      if (n < fewest) {
        fewest = n;
        best = i;
      }
    }
    lit.text.resize(best + width);
  }
  return out;
}

}  // namespace

std::vector<RequiredLiteral> CutAtRarestKeys(const std::vector<RequiredLiteral>& literals,
                                             std::string_view sample) {
  return CutAfterRarestWindow(literals, sample, kVectorscanKeyBytes);
}

std::vector<RequiredLiteral> CutAtRarestEnds(const std::vector<RequiredLiteral>& literals,
                                             std::string_view sample) {
  return CutAfterRarestWindow(literals, sample, kTeddyMaskBytes);
}

}  // namespace faultline
