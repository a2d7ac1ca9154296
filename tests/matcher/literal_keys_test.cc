// SPDX-License-Identifier: Apache-2.0
// CutAtRarestKeys (matcher/literal_keys.h): where each literal is cut, and
// that the cut literal is always a part of the literal (so still required).
#include "matcher/literal_keys.h"

#include <random>
#include <utility>

#include <doctest/doctest.h>

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

Strings Cut(const Strings& texts, std::string_view sample) {
  std::vector<RequiredLiteral> literals;
  for (const std::string& t : texts) literals.push_back({t, false});
  Strings out;
  for (const RequiredLiteral& lit : CutAtRarestKeys(literals, sample)) out.push_back(lit.text);
  return out;
}

std::string Repeat(std::string_view line, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out.append(line).append("\n");
  return out;
}

TEST_CASE("a literal is cut after the first of its rarest 8 bytes in the sample") {
  // " with status " is common here, and so is every window of
  // " rpcSendMessage"; "essage f" is the first window the sample lacks.
  const std::string sample = Repeat("NVRM: rpcSendMessage done with status 0x0", 50) +
                             Repeat("kubelet: probe failed with status 503", 50);
  CHECK(Cut({" rpcSendMessage failed with status "}, sample) == Strings{" rpcSendMessage f"});
  // With no window in the sample, the first 8 bytes: the shortest cut.
  CHECK(Cut({"Watchdog caught collective operation timeout"}, sample) == Strings{"Watchdog"});
  // Only counts decide: a window seen once beats one seen twice.
  CHECK(Cut({"abcdefghij"}, "abcdefgh bcdefghi bcdefghi cdefghij cdefghij") == Strings{"abcdefgh"});
  CHECK(Cut({"abcdefghij"}, "abcdefgh abcdefgh bcdefghi cdefghij cdefghij") ==
        Strings{"abcdefghi"});
}

TEST_CASE("short and caseless literals are left whole, and the order is kept") {
  std::vector<RequiredLiteral> literals = {{"Xid (", false},
                                           {"exactly8", false},
                                           {"caseless literal text", true},
                                           {"long literal", false}};
  const std::vector<RequiredLiteral> cut = CutAtRarestKeys(literals, "");
  REQUIRE(cut.size() == 4);
  CHECK(cut[0] == literals[0]);
  CHECK(cut[1] == literals[1]);
  CHECK(cut[2] == literals[2]);
  CHECK(cut[3] == RequiredLiteral{"long lit", false});
  // Samples shorter than a window, or of blank lines only, count nothing.
  CHECK(Cut({"long literal"}, "long") == Strings{"long lit"});
  CHECK(Cut({"long literal"}, std::string(100, '\n')) == Strings{"long lit"});
}

// A random sample of 2,000 bytes and 20 literals of 1-30 bytes over few
// letters (windows repeat often); the literals hold no newline.
std::pair<std::string, Strings> RandomCase(std::mt19937& rng) {
  const std::string alphabet = "ab \n";
  std::string sample;
  for (int i = 0; i < 2000; ++i) sample += alphabet[rng() % alphabet.size()];
  Strings texts;
  for (int i = 0; i < 20; ++i) {
    std::string t;
    const std::size_t len = 1 + rng() % 30;
    for (std::size_t k = 0; k < len; ++k) t += alphabet[rng() % 3];
    texts.push_back(t);
  }
  return {sample, texts};
}

TEST_CASE("a cut literal is a prefix of the literal, at least 8 bytes, on any sample") {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    const auto [sample, texts] = RandomCase(rng);
    const Strings cut = Cut(texts, sample);
    REQUIRE(cut.size() == texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      CHECK(texts[i].starts_with(cut[i]));
      if (texts[i].size() <= kVectorscanKeyBytes) {
        CHECK(cut[i] == texts[i]);
      } else {
        CHECK(cut[i].size() >= kVectorscanKeyBytes);
      }
    }
  }
}

Strings CutEnds(const Strings& texts, std::string_view sample) {
  std::vector<RequiredLiteral> literals;
  for (const std::string& t : texts) literals.push_back({t, false});
  Strings out;
  for (const RequiredLiteral& lit : CutAtRarestEnds(literals, sample)) out.push_back(lit.text);
  return out;
}

TEST_CASE("for Teddy a literal ends at its rarest 4 bytes, at its 8th byte or later") {
  // The 4-byte windows ending at byte 8 or later: "efgh" three times in
  // the sample, "fghi" twice, "ghij" once, "hijk" and "ijkl" twice.
  const std::string sample = "efgh efgh efgh fghi fghi ghij hijk hijk ijkl ijkl";
  CHECK(CutEnds({"abcdefghijkl"}, sample) == Strings{"abcdefghij"});
  // CutAtRarestKeys sees no 8-byte window of it there: the first 8 bytes.
  CHECK(Cut({"abcdefghijkl"}, sample) == Strings{"abcdefgh"});
  // Never shorter than 8 bytes, even where a shorter end is rarer: "abcd"
  // is nowhere in the sample, "efgh" everywhere.
  CHECK(CutEnds({"abcdefghij"}, Repeat("efgh fghi ghij", 10)) == Strings{"abcdefgh"});
}

TEST_CASE("for Teddy short and caseless literals are left whole, and the order is kept") {
  std::vector<RequiredLiteral> literals = {{"Xid (", false},
                                           {"exactly8", false},
                                           {"caseless literal text", true},
                                           {"long literal", false},
                                           {"Xid (", false}};
  const std::vector<RequiredLiteral> cut = CutAtRarestEnds(literals, "");
  REQUIRE(cut.size() == 5);
  CHECK(cut[0] == literals[0]);
  CHECK(cut[1] == literals[1]);
  CHECK(cut[2] == literals[2]);
  CHECK(cut[3] == RequiredLiteral{"long lit", false});
  CHECK(cut[4] == literals[4]);
}

TEST_CASE("a literal cut for Teddy is a prefix of it, at least 8 bytes, on any sample") {
  std::mt19937 rng(17);
  for (int round = 0; round < 200; ++round) {
    const auto [sample, texts] = RandomCase(rng);
    const Strings cut = CutEnds(texts, sample);
    REQUIRE(cut.size() == texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) {
      CHECK(texts[i].starts_with(cut[i]));
      CHECK(cut[i].size() >= std::min(texts[i].size(), kVectorscanKeyBytes));
    }
  }
}

}  // namespace
}  // namespace faultline
