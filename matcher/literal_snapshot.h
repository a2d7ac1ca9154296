// SPDX-License-Identifier: Apache-2.0
// The prefilter's literals of the built-in packs' patterns, extracted at
// build time: extraction parses and walks every pattern three times
// (literal_prefilter.h, literal_expansion.h), 66 M instructions, 40% of a
// `faultline scan` start (bench/README.md, issue 30). fl-snapshot-rules
// writes what it extracts for each built-in pattern; a start takes a rule's
// literals from there when the snapshot holds its pattern, byte for byte,
// and extracts them itself otherwise.
//
// Staleness: an entry is found by the whole pattern text, so an edited or
// user-written pattern is never given another pattern's literals; and the
// snapshot carries the digest of the extraction code that wrote it
// (kLiteralCodeDigest, taken by CMake over the extraction sources), so a
// snapshot written by other extraction code is refused whole.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// What the prefilter takes from one pattern: ExtractRequiredLiterals, and
// when that found any, ExtractConfirmLiteralSets and
// ExtractExpandedLiteralSets; when it found none, the first expanded set
// (literals of 3 bytes or more) is the required one, and the next confirms.
// Empty when neither found any: the rule runs on every line (W202).
struct PatternLiterals {
  std::vector<RequiredLiteral> required;
  std::vector<std::vector<RequiredLiteral>> confirm;
  std::vector<std::vector<RequiredLiteral>> expanded;
  bool operator==(const PatternLiterals&) const = default;
};
PatternLiterals ExtractPatternLiterals(std::string_view pattern);

// The digest of the extraction sources this binary was built from (hex).
extern const std::string_view kLiteralCodeDigest;

// The extractions of `patterns` (repeats once) with `digest` (the current
// code's unless a test writes a stale one), in a private binary layout.
std::string SerializeLiteralSnapshot(const std::vector<std::string>& patterns,
                                     std::string_view digest = kLiteralCodeDigest);

// A read snapshot: pattern text -> its literals. Immutable; thread-safe.
class LiteralSnapshot {
 public:
  // nullopt when `bytes` are not one whole snapshot of this layout written
  // by this extraction code (truncated, extended, corrupt, another digest).
  // Never reads out of bounds. Alternatives reads `bytes` later: they
  // must outlive the snapshot (the built-in ones are static).
  static std::optional<LiteralSnapshot> Read(std::string_view bytes);

  // The literals of exactly `pattern`; null when it has no entry.
  const PatternLiterals* Find(std::string_view pattern) const;
  // ExtractAlternativeLiteralSets(pattern), as the build extracted it, for
  // a sampled scan (sample_literals.h; 54 M instructions of a sampled scan
  // of the built-in packs); nullopt when it has no entry. Read from the
  // bytes when asked: a start that samples nothing never reads them.
  std::optional<std::vector<std::vector<RequiredLiteral>>> Alternatives(
      std::string_view pattern) const;
  std::size_t size() const { return by_pattern_.size(); }

 private:
  struct Entry {
    PatternLiterals literals;
    std::string_view alternatives;  // their sets, as WriteSets wrote them
  };
  std::unordered_map<std::string, Entry> by_pattern_;
};

// The snapshot fl-snapshot-rules embedded for the built-in packs (empty when
// the binary has none). Defined in the generated builtin_rule_packs.cc.
std::string_view BuiltinLiteralSnapshotBytes();

}  // namespace faultline
