// SPDX-License-Identifier: Apache-2.0
// Expanded literal sets (matcher/literal_expansion.h): what they spell out,
// that every match holds one literal of each, and that a scan confirming
// hits with them finds exactly what a scan without a prefilter finds.
#include "matcher/literal_expansion.h"

#include <algorithm>
#include <random>

#include <doctest/doctest.h>
#include <re2/re2.h>

#include "matcher/input_line.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

// Each set as "a|b|" ("(?i)" before a caseless literal).
Strings Sets(std::string_view pattern) {
  return RenderLiteralSets(ExtractExpandedLiteralSets(pattern));
}

// Sets() as one string, so that a failed CHECK shows it.
std::string Joined(std::string_view pattern) {
  std::string out;
  for (const std::string& set : Sets(pattern)) out += "{" + set + "}";
  return out;
}

// Through LineHasOneOf, as the scan checks them.
bool HoldsOneOfEach(std::string_view line, std::string_view pattern) {
  for (std::vector<RequiredLiteral>& set : ExtractExpandedLiteralSets(pattern)) {
    if (!LineHasOneOf(line, MakeExpandedSet(std::move(set)))) return false;
  }
  return true;
}

constexpr const char* kLinkUp =
    R"((?P<driver>[\w-]+) (?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) )"
    R"((?P<netdev>[\w.-]+): (?:[\w-]+: [\w.-]+ )?(?:NIC )?Link (?:is )?[Uu]p)";
constexpr const char* kIoError =
    R"(I/O error, dev (?P<device>(?:nvme|sd|vd|xvd|hd|md|dm-)[\w.-]*), sector (?P<sector>\d+))";

TEST_CASE("a small choice next to literal text is spelt out into the literals it allows") {
  // The plain extractor keeps "Link " (which "NVLink traffic" holds too).
  // ("NIC Link Up" and the like are dropped: they hold "Link Up".)
  CHECK(Joined(kLinkUp) == "{Link Up|Link is Up|Link is up|Link up|}");
  // Into the start of a group: "I/O error, dev loop0" (a loop device) is out.
  CHECK(Joined(kIoError) ==
        "{I/O error, dev dm-|I/O error, dev hd|I/O error, dev md|I/O error, dev nvme|"
        "I/O error, dev sd|I/O error, dev vd|I/O error, dev xvd|}"
        "{, sector 0|, sector 1|, sector 2|, sector 3|, sector 4|, sector 5|, sector 6|, sector 7|"
        ", sector 8|, sector 9|}");
  // From the end of a repeat: the count's last digit ("no uncorrectable").
  CHECK(Sets(R"((?P<count>\d+) (?:new )?uncorrectable errors)").size() == 1);
  CHECK(Sets(R"((?P<count>\d+) (?:new )?uncorrectable errors)")[0].find("|9 new uncorrectable") !=
        std::string::npos);
  // Caseless letters stay caseless; a class folds to one caseless letter.
  CHECK(Joined(R"((?i)gpu [ab]x)") == "{(?i)gpu ax|(?i)gpu bx|}");
  // Nothing new: plain text, a choice too short, too wide, or several branches.
  CHECK(Sets("plain text only").empty());
  CHECK(Sets("a[bc]").empty());
  CHECK(Sets("ab[cd]").empty());  // "abc", "abd": shorter than 4 bytes
  CHECK(Sets(R"(code [a-z]+ failed)").empty());
  CHECK(Sets(R"(link (?:is )?down|port flap)").empty());
  // Never across a colon or a newline.
  for (const std::string& set : Sets(R"(mlx5: (?:port|link) (?:up|down))")) {
    CHECK(set.find(':') == std::string::npos);
  }
  CHECK(Sets("(?x)a b").empty());  // flags the reader does not know: nothing
}

TEST_CASE("every match holds a literal of each expanded set") {
  const std::vector<std::pair<std::string, Strings>> cases = {
      {kLinkUp,
       {"mlx5_core 0000:5e:00.0 eth2: Link up", "ice 0000:17:00.0 ens1: NIC Link is Up 100 Gbps",
        "bnxt 0000:3b:00.1 p1: a-b: c.d Link is up"}},
      {kIoError, {"I/O error, dev nvme0n1, sector 42", "x I/O error, dev dm-3, sector 1"}},
      {R"((?P<count>\d+) (?:new )?uncorrectable errors)",
       {"17 uncorrectable errors", "gpu 3 new uncorrectable errors"}},
      {R"((?i)gpu [ab]x)", {"GPU AX", "gpu bX"}},
      {R"(Xid (?:\(PCI)?[0-9]{2} (?:ab|cd)+ end)", {"Xid 12 ababcd end", "Xid (PCI99 cd end"}},
      {R"(fan(?:s)? (?:is |are )?(?:broken|dead)\b)", {"fan dead", "fans are broken"}},
  };
  for (const auto& c : cases) {
    const std::string& pattern = c.first;  // (a structured binding cannot be captured)
    const Strings& lines = c.second;
    const RE2 re(pattern);
    REQUIRE_MESSAGE(re.ok(), pattern);
    for (const std::string& line : lines) {
      REQUIRE_MESSAGE(RE2::PartialMatch(line, re), pattern << " / " << line);
      CHECK_MESSAGE(HoldsOneOfEach(line, pattern), pattern << " / " << line);
    }
  }
}

TEST_CASE("LineHasOneOf (a shared head or tail searched once) is LineHasLiteral on any literal") {
  const std::vector<std::vector<RequiredLiteral>> sets = {
      {{"ab_x", false}, {"ab_yy", false}, {"ab_", false}},  // a head
      {{"x_ab", false}, {"yy_ab", false}},                  // a tail
      {{"aab", false}, {"aabab", false}, {"b_a", false}},   // neither: one by one
      {{"Ab_x", true}, {"Ab_y", false}},                    // caseless: one by one
  };
  std::mt19937 rng(11);
  const std::string alphabet = "abxyAB_";
  for (const auto& literals : sets) {
    const ExpandedSet set = MakeExpandedSet(literals);
    for (int i = 0; i < 20000; ++i) {
      std::string line(rng() % 12, ' ');
      for (char& c : line) c = alphabet[rng() % alphabet.size()];
      const bool any = std::any_of(literals.begin(), literals.end(), [&](const RequiredLiteral& l) {
        return LineHasLiteral(line, l);
      });
      REQUIRE_MESSAGE(LineHasOneOf(line, set) == any, line);
    }
  }
  CHECK(MakeExpandedSet(sets[0]).common == "ab_");
  CHECK(MakeExpandedSet(sets[1]).common == "_ab");
  CHECK(MakeExpandedSet(sets[1]).common_is_tail);
  CHECK(MakeExpandedSet(sets[3]).common.empty());
}

TEST_CASE("the built-in rules' match tests hold a literal of each of their expanded sets") {
  Diagnostics diags;
  SourceTexts texts;
  auto set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  std::size_t expanded = 0, lines = 0;
  for (const Rule& rule : set->rules()) {
    if (!ExtractExpandedLiteralSets(rule.pattern).empty()) ++expanded;
    for (const RuleTest& t : rule.match_tests) {
      ++lines;
      // As scan sees it: the raw line (the message is a part of it).
      CHECK_MESSAGE(HoldsOneOfEach(t.line, rule.pattern), rule.id << ": " << t.line);
    }
  }
  CHECK(expanded > 0);
  MESSAGE(expanded << " built-in rules have expanded sets, " << lines << " match tests checked");
}

TEST_CASE("near misses stopped by expanded sets: the same matches as without a prefilter") {
  const std::string pack = std::string(R"(pack: expanded
version: 1
rules:
  - id: link-up
    sources: [kernel]
    pattern: ')") + kLinkUp +
                           R"('
  - id: io-error
    sources: [kernel]
    pattern: ')" + kIoError +
                           R"('
)";
  CompileOptions off;
  off.use_prefilter = false;
  Loaded with = LoadPack(pack);
  Loaded without = LoadPack(pack, off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  const std::vector<std::string> lines = {
      "kernel: mlx5_core 0000:5e:00.0 eth2: Link up",
      "kernel: ice 0000:17:00.0 ens1: NIC Link is Up 100 Gbps",
      "nv-fabricmanager[9]: configured NVSwitches to route GPU NVLink traffic.",
      "kernel: mlx5_core 0000:5e:00.0: Port: 1 Link INACTIVE",
      "kernel: I/O error, dev nvme0n1, sector 42 op 0x0:(READ)",
      "kernel: I/O error, dev loop2, sector 0 op 0x0:(READ)",
      "kernel: eth0: Link is Up - 100Gbps/Full",
  };
  std::mt19937 rng(3);
  std::string corpus;
  std::size_t may_match = 0;  // lines 0, 1, 4 and 6 (see below)
  for (int i = 0; i < 3000; ++i) {
    const std::size_t k = rng() % lines.size();
    may_match += k == 0 || k == 1 || k == 4 || k == 6;
    corpus += lines[k] + "\n";
  }
  auto collect = [&](const RuleSet& set, std::size_t* visited) {
    Strings out;
    set.ForEachCandidateLine(corpus, Origin::kAny,
                             [&](std::string_view, std::uint64_t) { ++*visited; });
    set.ScanBuffer(
        corpus, Origin::kAny,
        [&](std::string_view line, std::uint64_t n, std::vector<RuleMatch>& matches) {
          for (const RuleMatch& m : matches) {
            out.push_back(std::to_string(n) + " " + m.rule->id + " " + std::string(line));
          }
        });
    return out;
  };
  std::size_t visited_with = 0, visited_without = 0;
  const Strings a = collect(*with.set, &visited_with);
  CHECK(a.size() > 500);
  CHECK(a == collect(*without.set, &visited_without));
  // "NVLink", "Link INACTIVE" and "loop2" are no longer candidates; the
  // PCI-less "eth0: Link is Up" still is (only RE2 tells it from a match).
  CHECK(visited_without == 3000);
  CHECK(visited_with == may_match);
}

}  // namespace
}  // namespace faultline
