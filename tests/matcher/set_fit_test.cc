// SPDX-License-Identifier: Apache-2.0
// The build-time proof that rules fit in one RE2::Set (matcher/set_fit.h):
// it lets the built-in packs skip building origin `any`'s Set at start-up,
// covers only the very patterns it was made for, and never hides an E111.
#include "matcher/set_fit.h"

#include <doctest/doctest.h>
#include <re2/re2.h>

#include "matcher/rule_pack.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Views = std::vector<std::string_view>;

// A pack of `n` rules, each with its own pattern.
std::string PackOf(int n) {
  std::string yaml = "pack: t\nversion: 1\nrules:\n";
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i);
    yaml.append("  - id: t.r").append(id).append("\n    sources: [kernel]\n    pattern: 'rule");
    yaml.append(id).append(" (?P<dev>[a-z]+[0-9]{1,3}) failed with (?P<code>-?[0-9]+) at ");
    yaml.append("[0-9a-f]{8}'\n");
  }
  return yaml;
}

std::vector<Rule> RulesOf(const std::string& yaml) {
  Diagnostics diags;
  std::vector<Rule> rules = ParseRulePack(yaml, "t.yaml", diags).rules;
  REQUIRE_FALSE(diags.has_errors());
  return rules;
}

Views PatternsOf(const std::vector<Rule>& rules) {
  Views out;
  for (const Rule& r : rules) out.push_back(r.pattern);
  return out;
}

TEST_CASE("the built-in packs are proven to fit: origin any's Set is built when first matched") {
  REQUIRE(SetFitProof::Read(BuiltinSetFitBytes()));
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  CHECK(RuleSetTesting::AnySetDeferred(*set));
  CHECK_FALSE(RuleSetTesting::AnySetBuilt(*set));
  const std::vector<RuleMatch> m = MatchLine(
      *set, "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.");
  CHECK(RuleSetTesting::AnySetBuilt(*set));
  REQUIRE(m.size() == 1);
  CHECK(m[0].rule->id == "nvidia.xid");
  CHECK(m[0].fields.at("xid") == "79");
}

TEST_CASE("a proof covers its patterns only, in their order, with at least its memory") {
  const Views ab{"link (?:is )?down", "port [0-9]+ flapped"};
  const std::string bytes = SetFitProof::Prove(ab, 1 << 20);
  std::optional<SetFitProof> proof = SetFitProof::Read(bytes);
  REQUIRE(proof);
  CHECK(proof->Covers(ab, 1 << 20));
  CHECK(proof->Covers(ab, 2 << 20));
  CHECK_FALSE(proof->Covers(ab, (1 << 20) - 1));
  CHECK_FALSE(proof->Covers(Views{ab[1], ab[0]}, 1 << 20));
  CHECK_FALSE(proof->Covers(Views{ab[0]}, 1 << 20));
  CHECK_FALSE(proof->Covers(Views{ab[0], ab[1], "x"}, 1 << 20));
  CHECK_FALSE(proof->Covers(Views{ab[0], "port [0-9]+ flapped!"}, 1 << 20));

  // Patterns that do not fit get no proof; a pattern RE2 refuses neither.
  CHECK(SetFitProof::Prove(ab, 256).empty());
  CHECK(SetFitProof::Prove(Views{"a(b"}, 1 << 20).empty());
}

TEST_CASE("a truncated, extended or foreign proof is refused, never misread") {
  const std::string bytes = SetFitProof::Prove(Views{"link down", "port flapped"}, 1 << 20);
  REQUIRE(SetFitProof::Read(bytes));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    CHECK_FALSE(SetFitProof::Read(std::string_view(bytes).substr(0, cut)));
  }
  CHECK_FALSE(SetFitProof::Read(bytes + "x"));
  std::string foreign = bytes;
  foreign[0] = static_cast<char>(foreign[0] ^ 0x55);
  CHECK_FALSE(SetFitProof::Read(foreign));
  std::string huge = bytes;
  for (std::size_t i = 12; i < 16; ++i) huge[i] = '\xff';  // the pattern count
  CHECK_FALSE(SetFitProof::Read(huge));
}

TEST_CASE("a proof made for more memory or other rules never hides an E111") {
  // A budget where each rule compiles alone but the forty do not fit in one
  // Set: found here, so that the test holds for any RE2 release.
  const std::vector<Rule> rules = RulesOf(PackOf(40));
  const Views patterns = PatternsOf(rules);
  std::int64_t budget = 0;
  for (std::int64_t mem = 4 << 10; mem <= (8 << 20) && budget == 0; mem += mem / 4) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(mem);
    bool alone = true;
    for (std::string_view p : patterns) alone = alone && RE2(p, o).ok();
    if (alone && !BuildPatternSet(patterns, mem)) budget = mem;
  }
  REQUIRE(budget > 0);
  CompileOptions tight;
  tight.max_memory_bytes = budget;

  auto e111 = [&](std::string_view proof) {
    Diagnostics diags;
    std::shared_ptr<const RuleSet> set =
        RuleSetTesting::CompileWithSnapshots(rules, tight, diags, {}, proof);
    bool reported = false;
    for (const Diagnostic& d : diags.all()) reported = reported || d.code == "E111";
    return set == nullptr && reported;
  };
  CHECK(e111({}));
  // These very patterns fit with 64 MiB, not with `budget`.
  CHECK(e111(SetFitProof::Prove(patterns, std::int64_t{64} << 20)));
  // Other patterns (the first 39) fit with `budget`: not these forty.
  const std::string fewer = SetFitProof::Prove(Views(patterns.begin(), patterns.end() - 1), budget);
  if (!fewer.empty()) CHECK(e111(fewer));

  // Control: a proof that applies defers the Set. Here a false one (a
  // proof for 64 MiB with `budget` written in), as from another RE2 release:
  // the Set then does not build at its first match, and each rule runs
  // alone, with the same matches.
  std::string forged = SetFitProof::Prove(patterns, std::int64_t{64} << 20);
  REQUIRE(forged.size() > 12);
  forged.replace(4, sizeof budget, reinterpret_cast<const char*>(&budget), sizeof budget);
  Diagnostics diags;
  std::shared_ptr<const RuleSet> set =
      RuleSetTesting::CompileWithSnapshots(rules, tight, diags, {}, forged);
  REQUIRE(set);
  CHECK(RuleSetTesting::AnySetDeferred(*set));
  const std::vector<RuleMatch> m = MatchLine(*set, "rule7 sda12 failed with -5 at 0badf00d");
  CHECK_FALSE(RuleSetTesting::AnySetBuilt(*set));
  REQUIRE(m.size() == 1);
  CHECK(m[0].rule->id == "t.r7");
  CHECK(m[0].fields.at("code") == "-5");
  CHECK(MatchLine(*set, "rule7 sda12 failed with x at 0badf00d").empty());
}

}  // namespace
}  // namespace faultline
