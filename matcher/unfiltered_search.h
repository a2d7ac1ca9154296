// SPDX-License-Identifier: Apache-2.0
// The lines of a buffer where a rule without a prefilter literal (W202)
// could match: one RE2 search over a whole chunk for all such rules, in
// place of every rule's regex on every line. Only matcher/ includes it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "matcher/byte_pairs.h"

namespace faultline {

// `pattern` rewritten so that it matches, in a raw log line, wherever the
// pattern itself matches in the message that ScanRaw takes from that line
// (matcher/input_line.h): a superset. Anchors and word boundaries (^ $ \A
// \z \b \B) become empty (the message starts after a dmesg or journal
// prefix); named and plain groups become non-capturing (one regex holds
// every rule); and every atom that can match ':' may first take a
// "[pid]" (journal-short "ident[pid]: msg" is the message "ident: msg").
// nullopt when the pattern holds what this cannot relax: \C (one byte,
// newline included), or syntax it does not read.
std::optional<std::string> RelaxForRawLines(std::string_view pattern);

// One search for a set of patterns (the unfiltered rules of one origin).
// Immutable after Build; Lines() may be called from any thread.
class UnfilteredSearch {
 public:
  // nullptr when a pattern cannot be relaxed, RE2 refuses the combined
  // pattern, or it matches the empty string (it would mark every line):
  // the caller then runs the rules on every line, as before.
  //
  // When every pattern has byte pairs (byte_pairs.h), the regex runs only
  // on the lines holding one. Each pattern's choice of pairs is the one
  // on fewest lines of `sample` (whole lines of the input, a few hundred
  // KiB); if even those mark half of its lines, the search runs over
  // every byte as without pairs. An empty sample takes the first choices.
  static std::unique_ptr<UnfilteredSearch> Build(std::span<const std::string_view> patterns,
                                                 std::string_view sample = {});

  // Appends to `starts` the offset in `chunk` of the first byte of each
  // line that may hold a match of one of the patterns in its message,
  // ascending, each once. `chunk` holds whole lines: it ends at a newline
  // or at the end of the buffer.
  void Lines(std::string_view chunk, std::vector<std::size_t>& starts) const;

  // With byte pairs, the marked lines are searched this many bytes at a
  // time (a line longer than this, by itself where it stands): a few
  // hundred lines per RE2 call, in L1 cache.
  static constexpr std::size_t kBatchBytes = std::size_t{16} << 10;

  // The combined relaxed pattern (tests and bench/README.md).
  const std::string& pattern() const { return re_->pattern(); }
  // Whether the regex runs only on the lines of the patterns' byte pairs.
  bool by_byte_pairs() const { return pairs_.has_value(); }

 private:
  UnfilteredSearch(std::unique_ptr<RE2> re, std::optional<BytePairLines> pairs)
      : re_(std::move(re)), pairs_(std::move(pairs)) {}

  // The relaxed patterns in one regex, never_nl. Not Vectorscan: with
  // these patterns it ran 13 times faster, but Debian's 5.4.9 missed
  // matches (bench/README.md, "Rules without a literal"), and a search
  // that loses a line loses a fault.
  std::unique_ptr<RE2> re_;
  // When every pattern has required byte pairs (byte_pairs.h): the lines
  // that hold one, on which alone re_ runs.
  std::optional<BytePairLines> pairs_;
};

}  // namespace faultline
