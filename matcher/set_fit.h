// SPDX-License-Identifier: Apache-2.0
// Whether rules fit in one RE2::Set, proven at build time for the built-in
// packs. RuleSet::Compile builds origin `any`'s Set (every enabled rule) to
// refuse, with E111, rules that do not fit; for the built-in packs that
// build was 40 M instructions of every start (bench/README.md, issue 30),
// and the Set is rarely used (each origin's own Set is built when first
// matched). fl-snapshot-rules builds that Set once and records the patterns
// it held and the memory it was given; a start whose `any` Set would hold
// exactly those patterns, with at least that memory, builds it when first
// matched instead, like the other origins'.
//
// A proof never changes a result: were the Set not to build later after
// all (another RE2 library than the build's), matching runs each rule
// alone (RuleSet::Impl::RunSet), the same matches, slower.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <re2/set.h>

namespace faultline {

// The unanchored RE2::Set of `patterns` (pattern i gets index i) with
// max_mem `max_memory_bytes`, as RuleSet builds each origin's; null when
// a pattern does not parse or the whole does not compile within max_mem.
std::unique_ptr<RE2::Set> BuildPatternSet(const std::vector<std::string_view>& patterns,
                                          std::int64_t max_memory_bytes);

class SetFitProof {
 public:
  // The proof that `patterns` fit in one Set at `max_memory_bytes`, built
  // here (BuildPatternSet), as bytes; empty when they do not fit.
  static std::string Prove(const std::vector<std::string_view>& patterns,
                           std::int64_t max_memory_bytes);
  // nullopt unless `bytes` are one whole proof. Never reads out of bounds.
  static std::optional<SetFitProof> Read(std::string_view bytes);

  // True when `patterns` are the proven ones, in the same order, and
  // `max_memory_bytes` is at least the proof's (a Set fits in more memory
  // if it fits in less).
  bool Covers(const std::vector<std::string_view>& patterns, std::int64_t max_memory_bytes) const;

 private:
  std::int64_t max_memory_bytes_ = 0;
  std::vector<std::string> patterns_;
};

// The proof fl-snapshot-rules made for the built-in packs' enabled rules
// (empty: they did not fit, or the binary has none). Defined in the
// generated builtin_rule_packs.cc.
std::string_view BuiltinSetFitBytes();

}  // namespace faultline
