// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace faultline {

// A literal that every match of a regex contains.
struct RequiredLiteral {
  std::string text;
  bool caseless = false;  // the regex matches it in any letter case
  bool operator==(const RequiredLiteral&) const = default;
};

// Sorts `literals` by (text, caseless) and drops repeats: the one order in
// which literal sets are compared.
void SortUniqueLiterals(std::vector<RequiredLiteral>& literals);

// Literals of which every match of the RE2 `pattern` contains at least one,
// for the prefilter; empty when there are none worth searching for (shorter
// than 3 bytes, or the pattern is too dynamic to tell). Usually one literal;
// an alternation ("link down|port flap") gives one per branch. Among the
// mandatory literals it prefers the rarest in log text (scored by byte
// class and by how often it occurs in typical log noise), not merely the
// longest. Literals never contain ':' or a newline, so that a hit in a raw
// input line (before `IDENT[pid]:` is rewritten to `IDENT:`) still holds for
// the rewritten text. A caseless literal is matched in any ASCII case.
// With `case_classes`, a class of one letter's two cases (`[Xx]`) is that
// letter, caseless: only for patterns without a literal otherwise (it made
// case-sensitive literals such as "own" of `[Dd]own` caseless, and a
// caseless search costs more: subset-b gen 256 MiB +10%).
std::vector<RequiredLiteral> ExtractRequiredLiterals(std::string_view pattern,
                                                     bool case_classes = false);

// Further sets of literals that every match of `pattern` also contains (one
// literal of each set), besides the one ExtractRequiredLiterals chose: a
// prefilter hit is confirmed by finding one of each set on the line before
// the regex runs. At most three, the rarest first; each literal is at
// least 3 bytes. Empty when there is no chosen set or nothing else worth it.
std::vector<std::vector<RequiredLiteral>> ExtractConfirmLiteralSets(std::string_view pattern);

// ExtractRequiredLiterals(pattern) and ExtractConfirmLiteralSets(pattern)
// from one reading of the pattern: each alone parses and walks it, and
// doing so twice was a third of a user pack's literal extraction at start
// (user-fleet: 5 M of the 66 M instructions of a start; bench/README.md,
// issue 30).
struct RequiredAndConfirmLiterals {
  std::vector<RequiredLiteral> required;
  std::vector<std::vector<RequiredLiteral>> confirm;
};
RequiredAndConfirmLiterals ExtractRequiredAndConfirmLiterals(std::string_view pattern);

// Every set of literals of which each match of `pattern` contains one (at
// least 3 bytes each, sorted), the set ExtractRequiredLiterals chose first,
// the rest by estimated rarity; at most 16. These are what a scan may search
// for instead of the chosen set when its input shows that set is common
// there (the chosen set is ranked by a static estimate only). Sets of an
// alternation join one set of each branch. Empty when there is no chosen set.
std::vector<std::vector<RequiredLiteral>> ExtractAlternativeLiteralSets(std::string_view pattern);

// True if `line` contains `lit` (in any ASCII case if it is caseless).
bool LineHasLiteral(std::string_view line, const RequiredLiteral& lit);

// Many literals searched at once through a whole buffer with Vectorscan.
// Immutable after Build; Scan is thread-safe (each call uses a scratch from
// a small pool).
class LiteralPrefilter {
 public:
  // `literals[i]` gets id i. kInvalidArgument if Vectorscan refuses them.
  // With `any_cpu`, the database is compiled for every CPU Vectorscan runs
  // on, not tuned to this one's features: one to Serialize for another
  // machine (a database compiled here for AVX-512 is refused by a CPU
  // without it). FDR's tables (past kTeddyMaxLiterals) do not depend on
  // them: the built-in packs' 303 literals scanned 64 MiB in 33.6 ms
  // either way; Teddy's (fewer literals) do.
  static Result<std::unique_ptr<LiteralPrefilter>> Build(
      const std::vector<RequiredLiteral>& literals, bool any_cpu = false);
  // The database as bytes for Deserialize (another process may load it:
  // prefilter_db_snapshot.h); empty if Vectorscan cannot serialize it.
  std::string Serialize() const;
  // The prefilter that Serialize wrote, of `literals` literals (ids 0 to
  // literals - 1, as Build gave them). kInvalidArgument when this
  // Vectorscan refuses the bytes (another version, another CPU's
  // database, corrupt bytes); the caller then builds it.
  static Result<std::unique_ptr<LiteralPrefilter>> Deserialize(std::string_view bytes,
                                                               unsigned literals);
  ~LiteralPrefilter();
  LiteralPrefilter(const LiteralPrefilter&) = delete;
  LiteralPrefilter& operator=(const LiteralPrefilter&) = delete;

  // Calls on_hit(id, end) for each occurrence of literal `id` ending at byte
  // offset `end` of `text`, in increasing order of `end`. kInternal if
  // Vectorscan fails (the caller then falls back to no prefilter).
  using HitFn = void (*)(void* context, unsigned id, std::uint64_t end);
  Status Scan(std::string_view text, HitFn on_hit, void* context) const;

 private:
  struct State;
  explicit LiteralPrefilter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace faultline
