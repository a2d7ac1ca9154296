// SPDX-License-Identifier: Apache-2.0
// FindLiteral, the required-literal check of every candidate line: the
// first occurrence, exactly where a plain search finds it, at every
// alignment of its 16-byte blocks and at the line's end.
#include "matcher/find_literal.h"

#include <random>
#include <string>

#include <doctest/doctest.h>

namespace faultline {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// The reference: a search byte by byte, letters folded when caseless.
std::size_t Naive(std::string_view hay, std::string_view needle, bool caseless, std::size_t from) {
  if (from > hay.size()) return std::string_view::npos;
  for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
    bool ok = true;
    for (std::size_t k = 0; k < needle.size() && ok; ++k) {
      ok = caseless ? Lower(hay[i + k]) == Lower(needle[k]) : hay[i + k] == needle[k];
    }
    if (ok) return i;
  }
  return std::string_view::npos;
}

TEST_CASE("FindLiteral finds the first occurrence, in case or caseless") {
  const std::string line = "kernel: mlx5_core 0000:3b:00.0: Port module event: module 0";
  CHECK(FindLiteral(line, "mlx5_core", false) == line.find("mlx5_core"));
  CHECK(FindLiteral(line, "module", false) == line.find("module"));
  CHECK(FindLiteral(line, "module", false, line.find("module") + 1) == line.find("module 0"));
  CHECK(FindLiteral(line, "MODULE", false) == std::string_view::npos);
  CHECK(FindLiteral(line, "MODULE EVENT", true) == line.find("module event"));
  CHECK(FindLiteral(line, "module 0", false) == line.size() - 8);  // at the very end
  CHECK(FindLiteral(line, "module 00", false) == std::string_view::npos);
  CHECK(FindLiteral("ab", "abc", false) == std::string_view::npos);  // longer than the line
  CHECK(FindLiteral("", "a", false) == std::string_view::npos);
  CHECK(FindLiteral("abc", "", false) == 0);
  // Caseless folds ASCII letters only: '[' (0x5B) is not '{' (0x7B) folded.
  CHECK(FindLiteral("x[y", "{Y", true) == std::string_view::npos);
  CHECK(FindLiteral("x{Y", "{y", true) == 1);
  // A byte of 0x80 or more (UTF-8) only matches itself.
  CHECK(FindLiteral("caf\xc3\xa9 ok", "\xc3\xa9 OK", true) == 3);
}

TEST_CASE("FindLiteral agrees with a plain search at every offset and alignment") {
  std::mt19937 rng(7);
  // A small alphabet with both cases makes near misses (first and last
  // byte right, middle wrong) common, which is what the block search skips.
  const std::string alphabet = "abAB:_ 0";
  auto random_text = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  int found = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string hay = random_text(rng() % 70);
    std::string needle = random_text(1 + rng() % 6);
    if (!hay.empty() && rng() % 2) {  // often a needle that is there
      const std::size_t at = rng() % hay.size();
      needle = hay.substr(at, 1 + rng() % 6);
    }
    const bool caseless = rng() % 2;
    const std::size_t from = rng() % 4 == 0 ? rng() % (hay.size() + 2) : 0;
    const std::size_t want = Naive(hay, needle, caseless, from);
    found += want != std::string_view::npos;
    CHECK_MESSAGE(
        FindLiteral(hay, needle, caseless, from) == want,
        "hay='" << hay << "' needle='" << needle << "' caseless=" << caseless << " from=" << from);
  }
  CHECK(found > 5000);  // the property was tested on hits, not only misses
}

}  // namespace
}  // namespace faultline
