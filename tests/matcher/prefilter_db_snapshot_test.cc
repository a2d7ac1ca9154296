// SPDX-License-Identifier: Apache-2.0
// The built-in packs' prefilter database, compiled at build time
// (matcher/prefilter_db_snapshot.h): a start with the built-in packs alone
// loads it instead of compiling, and a database written for other
// literals, or bytes Vectorscan refuses, are never used: the prefilter is
// compiled and every rule still matches.
#include "matcher/prefilter_db_snapshot.h"

#include <algorithm>

#include <doctest/doctest.h>

#include "matcher/rule_pack.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

constexpr const char* kPack = R"(pack: t
version: 1
rules:
  - id: t.xid
    sources: [kernel]
    pattern: 'NVRM: Xid \((?P<pci>[^)]*)\): (?P<code>\d+)'
    category: hardware
    severity: critical
    action: taint
    summary: s
  - id: t.bus
    sources: [kernel]
    pattern: '(?i)fallen off the bus'
    category: hardware
    severity: critical
    action: taint
    summary: s
)";

const std::string kLog =
    "noise\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1\nGPU HAS FALLEN OFF THE BUS\nmore noise\n";

std::vector<Rule> Rules() {
  Diagnostics diags;
  std::vector<Rule> rules = ParseRulePack(kPack, "t.yaml", diags).rules;
  REQUIRE_FALSE(diags.has_errors());
  return rules;
}

// The literals RuleSet searches for with Rules(): " Xid (" and the caseless
// "fallen off the bus", in load order.
std::vector<RequiredLiteral> RulesLiterals() {
  return {{" Xid (", false}, {"fallen off the bus", true}};
}

// Every match of a scan of kLog as "LINE RULE".
Strings Scan(const RuleSet& set) {
  Strings out;
  set.ScanBuffer(kLog, Origin::kAny,
                 [&](std::string_view, std::uint64_t n, std::vector<RuleMatch>& matches) {
                   for (const RuleMatch& m : matches) {
                     out.push_back(std::to_string(n) + " " + m.rule->id);
                   }
                 });
  return out;
}

const Strings kExpected{"2 t.xid", "3 t.bus"};

TEST_CASE("a start with the built-in packs alone loads their prefilter database") {
  REQUIRE_FALSE(BuiltinPrefilterDbBytes().empty());
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  CHECK(RuleSetTesting::PrefilterFromSnapshot(*set));
  std::vector<RuleMatch> out;
  set->ScanBuffer("noise\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1\n", Origin::kKernel,
                  [&](std::string_view, std::uint64_t, std::vector<RuleMatch>& matches) {
                    for (RuleMatch& m : matches) out.push_back(std::move(m));
                  });
  REQUIRE(out.size() == 1);
  CHECK(out[0].rule->id == "nvidia.xid");
}

TEST_CASE("a sampled scan of the built-in packs alone loads their sampler's database") {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  RuleSetTesting::SampleBuffersFrom(*set, 0);
  std::string log;
  while (log.size() < (64u << 10)) log += "noise\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1\n";
  std::size_t matched = 0;
  set->ScanBuffer(log, Origin::kKernel,
                  [&](std::string_view, std::uint64_t, std::vector<RuleMatch>& matches) {
                    matched += matches.size();
                  });
  CHECK(RuleSetTesting::SamplerFromSnapshot(*set));
  CHECK(matched ==
        log.size() / std::string("noise\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1\n").size());
}

TEST_CASE("the built-in packs with a user's pack beside them compile their own database") {
  TempDir dir;
  RuleSources sources;  // the built-in packs, and this one
  sources.paths.push_back(dir.Write("extra.yaml", kPack));
  CompileOptions off;
  off.use_prefilter = false;
  Loaded with, without;
  with.set = LoadRules(sources, {}, with.diags, with.texts);
  without.set = LoadRules(sources, off, without.diags, without.texts);
  REQUIRE(with.set);
  REQUIRE(without.set);
  CHECK_FALSE(RuleSetTesting::PrefilterFromSnapshot(*with.set));
  const Strings found = Scan(*with.set);
  CHECK(found == Scan(*without.set));
  for (const std::string& expected : kExpected) {
    CHECK(std::find(found.begin(), found.end(), expected) != found.end());
  }
}

TEST_CASE("a database written for exactly the rules' literals is loaded and finds their lines") {
  const std::string bytes = SerializePrefilterDbs({RulesLiterals()});
  REQUIRE_FALSE(bytes.empty());
  Diagnostics diags;
  auto set = RuleSetTesting::CompileWithPrefilterDb(Rules(), {}, diags, bytes);
  REQUIRE(set);
  CHECK(Scan(*set) == kExpected);
  CHECK(RuleSetTesting::PrefilterFromSnapshot(*set));
}

TEST_CASE("a database written for other literals is never used") {
  Diagnostics diags;
  // Another literal, the same literals in another order, one more.
  for (const std::vector<RequiredLiteral>& other : std::vector<std::vector<RequiredLiteral>>{
           {{" Xid (", false}, {"fallen off the bus", false}},
           {{"fallen off the bus", true}, {" Xid (", false}},
           {{" Xid (", false}, {"fallen off the bus", true}, {"SXid", false}}}) {
    const std::string bytes = SerializePrefilterDbs({other});
    REQUIRE_FALSE(bytes.empty());
    auto set = RuleSetTesting::CompileWithPrefilterDb(Rules(), {}, diags, bytes);
    REQUIRE(set);
    CHECK(Scan(*set) == kExpected);
    CHECK_FALSE(RuleSetTesting::PrefilterFromSnapshot(*set));
  }
}

TEST_CASE("each list of several is loaded from its own database") {
  const std::vector<RequiredLiteral> first{{"abc", false}, {"def", true}};
  const std::string bytes = SerializePrefilterDbs({first, RulesLiterals()});
  CHECK(LoadPrefilterDb(bytes, first));
  CHECK(LoadPrefilterDb(bytes, RulesLiterals()));
  CHECK_FALSE(LoadPrefilterDb(bytes, {{"abc", false}}));
}

TEST_CASE("truncated, extended or foreign bytes are refused, never misread") {
  const std::string bytes = SerializePrefilterDbs({RulesLiterals()});
  REQUIRE(LoadPrefilterDb(bytes, RulesLiterals()));
  CHECK_FALSE(LoadPrefilterDb(bytes.substr(0, bytes.size() - 1), RulesLiterals()));
  CHECK_FALSE(LoadPrefilterDb(bytes.substr(0, 8), RulesLiterals()));
  CHECK_FALSE(LoadPrefilterDb(bytes + "x", RulesLiterals()));
  CHECK_FALSE(LoadPrefilterDb("", RulesLiterals()));
  // A layout word of another snapshot.
  std::string foreign = bytes;
  foreign[0] = static_cast<char>(foreign[0] ^ 1);
  CHECK_FALSE(LoadPrefilterDb(foreign, RulesLiterals()));
  // Vectorscan's own header (its magic number, at the database's start,
  // after the layout word, the entry count, the list and the database's
  // length): the list is right, Vectorscan refuses the rest.
  std::size_t db_at = 4 + 4 + 4 + 4;  // layout, entries, list length, database length
  for (const RequiredLiteral& lit : RulesLiterals()) db_at += 4 + lit.text.size() + 1;
  std::string refused = bytes;
  refused[db_at] = static_cast<char>(refused[db_at] ^ 0xff);
  CHECK_FALSE(LoadPrefilterDb(refused, RulesLiterals()));
  Diagnostics diags;
  auto set = RuleSetTesting::CompileWithPrefilterDb(Rules(), {}, diags, refused);
  REQUIRE(set);
  CHECK(Scan(*set) == kExpected);
  CHECK_FALSE(RuleSetTesting::PrefilterFromSnapshot(*set));
}

TEST_CASE("a prefilter read back from its bytes reports the same hits") {
  auto built = LiteralPrefilter::Build(RulesLiterals(), /*any_cpu=*/true);
  REQUIRE(built.ok());
  const std::string bytes = (*built)->Serialize();
  REQUIRE_FALSE(bytes.empty());
  auto read = LiteralPrefilter::Deserialize(bytes, 2);
  REQUIRE(read.ok());
  auto hits = [&](const LiteralPrefilter& p) {
    std::vector<std::pair<unsigned, std::uint64_t>> out;
    REQUIRE(p.Scan(
                 kLog,
                 [](void* ctx, unsigned id, std::uint64_t end) {
                   static_cast<std::vector<std::pair<unsigned, std::uint64_t>>*>(ctx)->emplace_back(
                       id, end);
                 },
                 &out)
                .ok());
    return out;
  };
  const auto expected = hits(**built);
  CHECK(expected.size() == 2);
  CHECK(hits(**read) == expected);
  CHECK_FALSE(LiteralPrefilter::Deserialize("not a database", 2).ok());
}

}  // namespace
}  // namespace faultline
