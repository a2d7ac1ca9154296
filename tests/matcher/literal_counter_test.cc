// SPDX-License-Identifier: Apache-2.0
// LiteralCounter (matcher/literal_counter.h): its counts are the sampler's
// only input, so they must be exactly a plain search's, and exactly the hits
// of the Vectorscan database it replaced (else the chosen plans change).
#include "matcher/literal_counter.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include <doctest/doctest.h>

#include "matcher/literal_expansion.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Counts = std::vector<std::uint64_t>;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The reference: string_view::find from every position past the last hit's
// start, on lower-cased copies for a caseless literal.
Counts ReferenceCounts(const std::vector<RequiredLiteral>& literals, std::string_view text) {
  Counts out;
  const std::string lower = Lower(text);
  for (const RequiredLiteral& lit : literals) {
    const std::string_view hay = lit.caseless ? std::string_view(lower) : text;
    const std::string needle = lit.caseless ? Lower(lit.text) : lit.text;
    std::uint64_t n = 0;
    for (std::size_t at = hay.find(needle); !needle.empty() && at != std::string_view::npos;
         at = hay.find(needle, at + 1)) {
      ++n;
    }
    out.push_back(n);
  }
  return out;
}

Counts VectorscanCounts(const std::vector<RequiredLiteral>& literals, std::string_view text) {
  auto built = LiteralPrefilter::Build(literals);
  REQUIRE(built.ok());
  Counts out(literals.size(), 0);
  auto hit = [](void* context, unsigned id, std::uint64_t) {
    ++(*static_cast<Counts*>(context))[id];
  };
  REQUIRE((*built)->Scan(text, hit, &out).ok());
  return out;
}

TEST_CASE("overlapping, caseless, short and edge literals are counted at every start") {
  const std::vector<RequiredLiteral> literals = {
      {"aa", false},    {"aaa", false},      {"aba", false},   {"AbA", true}, {"abc", false},
      {"ABC", false},   {"abc", true},       {"x", false},     {"X", true},   {"end", false},
      {"start", false}, {"n\xc3\xa9", true}, {"never", false}, {"a", false}};
  const std::string text = "startaaaa ababa ABCabcAbC xX n\xc3\xa9 N\xc3\xa9 N\xc3\x89 end";
  const Counts counts = LiteralCounter(literals).Count(text);
  CHECK(counts == ReferenceCounts(literals, text));
  CHECK(counts == VectorscanCounts(literals, text));
  // Spelt out, for the cases the reference could get wrong too.
  CHECK(counts[0] == 3);   // "aa" in "aaaa": 3 starts
  CHECK(counts[1] == 2);   // "aaa" in "aaaa"
  CHECK(counts[2] == 2);   // "aba" in "ababa", overlapping
  CHECK(counts[3] == 2);   // caseless "AbA" finds the same two
  CHECK(counts[4] == 1);   // "abc" exactly
  CHECK(counts[5] == 1);   // "ABC" exactly
  CHECK(counts[6] == 3);   // caseless: ABC, abc, AbC
  CHECK(counts[8] == 2);   // caseless "X": x and X
  CHECK(counts[9] == 1);   // ends the text
  CHECK(counts[10] == 1);  // starts it
  CHECK(counts[11] == 2);  // caseless folds ASCII only: "N\xc3\x89" is not "n\xc3\xa9"
  CHECK(counts[12] == 0);

  // Texts shorter than a key, and empty, and a literal longer than the text.
  for (std::string_view t : {"", "a", "ab", "abc", "startaa"}) {
    CHECK(LiteralCounter(literals).Count(t) == ReferenceCounts(literals, t));
  }
  CHECK(LiteralCounter({}).Count(text).empty());
  CHECK(LiteralCounter({{"", false}, {"abc", false}}).Count("abc") == Counts{0, 1});
}

TEST_CASE("random literals on random text: the reference's counts and Vectorscan's hits") {
  std::mt19937 rng(30);
  const std::string alphabet = "abAB \n\xff";  // few bytes: many overlapping hits
  for (int round = 0; round < 100; ++round) {
    std::string text;
    const std::size_t size = rng() % 3000;
    for (std::size_t i = 0; i < size; ++i) text += alphabet[rng() % alphabet.size()];
    std::vector<RequiredLiteral> literals;
    std::map<std::pair<std::string, bool>, bool> seen;  // ids are unique, as the sampler's
    for (int i = 0; i < 40; ++i) {
      RequiredLiteral lit;
      const std::size_t len = 1 + rng() % 6;
      for (std::size_t k = 0; k < len; ++k) lit.text += alphabet[rng() % (alphabet.size() - 2)];
      lit.caseless = rng() % 3 == 0;
      if (seen.emplace(std::pair(lit.text, lit.caseless), true).second) literals.push_back(lit);
    }
    const Counts counts = LiteralCounter(literals).Count(text);
    REQUIRE(counts == ReferenceCounts(literals, text));
    REQUIRE(counts == VectorscanCounts(literals, text));
  }
}

// What the sampler counts for a rule set: every plain and expanded literal
// set of every rule.
std::vector<RequiredLiteral> SampleLiterals(const RuleSet& set) {
  std::vector<RequiredLiteral> literals;
  for (const Rule& rule : set.rules()) {
    auto sets = ExtractAlternativeLiteralSets(rule.pattern);
    for (auto& expanded : ExtractExpandedLiteralSets(rule.pattern)) sets.push_back(expanded);
    for (const auto& s : sets) literals.insert(literals.end(), s.begin(), s.end());
  }
  return literals;
}

TEST_CASE("the sample literals of the built-in packs and of users' sets on real log lines") {
  Diagnostics diags;
  SourceTexts texts;
  auto builtin = LoadRules({}, {}, diags, texts);
  REQUIRE(builtin);
  std::vector<RequiredLiteral> literals = SampleLiterals(*builtin);
  // Users' sets (bench/sets/) write (?i): caseless literals.
  for (const char* name : {"user-gpu", "user-host", "npd"}) {
    Loaded user =
        LoadPack(ReadFileForTest(FL_SOURCE_DIR "/bench/sets/" + std::string(name) + ".yaml"));
    REQUIRE_MESSAGE(user.set, name);
    const std::vector<RequiredLiteral> more = SampleLiterals(*user.set);
    literals.insert(literals.end(), more.begin(), more.end());
  }
  SortUniqueLiterals(literals);
  REQUIRE(literals.size() > 100);
  REQUIRE(std::count_if(literals.begin(), literals.end(),
                        [](const RequiredLiteral& l) { return l.caseless; }) > 5);
  std::string text = ReadFileForTest(FL_SOURCE_DIR "/tests/data/sample-node.log");
  for (const auto& entry :
       std::filesystem::directory_iterator(FL_SOURCE_DIR "/tests/data/real-lines")) {
    text += ReadFileForTest(entry.path().string());
  }
  const Counts counts = LiteralCounter(literals).Count(text);
  CHECK(counts == ReferenceCounts(literals, text));
  CHECK(counts == VectorscanCounts(literals, text));
  CHECK(std::count_if(counts.begin(), counts.end(), [](std::uint64_t n) { return n > 0; }) > 50);
}

}  // namespace
}  // namespace faultline
