// SPDX-License-Identifier: Apache-2.0
// The RE2 syntax pieces that the ERE export and the literal extractor share:
// both must read a group, a repeat or an escape the way RE2 does.
#include "matcher/re2_syntax.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "matcher/ere_export.h"
#include "matcher/literal_prefilter.h"

namespace faultline {
namespace {

TEST_CASE("group openings: named, flags for a group, flags for the rest of the sequence") {
  auto named = ReadGroupOpen("(?P<pci>x)", 2);
  REQUIRE(named);
  CHECK(named->named);
  CHECK(named->end == 8);
  auto group = ReadGroupOpen("(?i:abc)", 2);
  REQUIRE(group);
  CHECK_FALSE(group->named);
  CHECK(group->flags == "i");
  CHECK_FALSE(group->rest_of_sequence);
  CHECK(group->end == 4);
  auto rest = ReadGroupOpen("(?-i)abc", 2);
  REQUIRE(rest);
  CHECK(rest->flags == "-i");
  CHECK(rest->rest_of_sequence);
  CHECK_FALSE(ReadGroupOpen("(?P<pci", 2));
  CHECK_FALSE(ReadGroupOpen("(?i", 2));
  CHECK(CaselessAfter("i", false));
  CHECK_FALSE(CaselessAfter("-i", true));
  CHECK(CaselessAfter("s", true));
}

TEST_CASE("a counted repeat, else RE2's literal brace, hex escapes, quoted text") {
  auto r = ReadCountedRepeat("a{2,5}b", 1);
  REQUIRE(r);
  CHECK(r->min == 2);
  CHECK(r->body == "2,5");
  CHECK(r->end == 6);
  CHECK_FALSE(ReadCountedRepeat("a{,5}", 1));
  CHECK_FALSE(ReadCountedRepeat("a{x}", 1));
  CHECK_FALSE(ReadCountedRepeat("a{2", 1));
  auto h = ReadHexEscape(R"(\x41)", 2);
  REQUIRE(h);
  CHECK(h->value == 0x41);
  CHECK(h->end == 4);
  auto braced = ReadHexEscape(R"(\x{263a}z)", 2);
  REQUIRE(braced);
  CHECK(braced->value == 0x263a);
  CHECK(braced->end == 8);
  CHECK_FALSE(ReadHexEscape(R"(\x{26)", 2));
  Quoted q = ReadQuoted(R"(\Qa.b*\Ec)", 2);
  CHECK(q.text == "a.b*");
  CHECK(q.end == 8);
  CHECK(ReadQuoted(R"(\Qa.b)", 2).text == "a.b");
}

TEST_CASE("the export and the extractor read the same pieces the same way") {
  std::string why;
  // (?i) for the rest of the sequence, a repeat, a quoted run, a hex escape.
  const char* pattern = R"(NVRM(?i) xid{2}\Q (pci\E\x3dnow)";
  CHECK(TranslateToEre(pattern, &why) == "NVRM [xX][iI][dD]{2} \\([pP][cC][iI]=[nN][oO][wW]");
  // The extractor sees the same two runs: before the repeat (widened to
  // caseless by the (?i) inside it) and the quoted run with the escape.
  std::vector<std::string> sets;
  for (const auto& set : ExtractAlternativeLiteralSets(pattern)) {
    REQUIRE(set.size() == 1);
    sets.push_back((set[0].caseless ? "(?i)" : "") + set[0].text);
  }
  CHECK(sets == std::vector<std::string>{"(?i)NVRM xi", "(?i) (pci=now"});
}

}  // namespace
}  // namespace faultline
