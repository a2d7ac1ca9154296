// SPDX-License-Identifier: Apache-2.0
// The built-in patterns' prefilter literals, extracted at build time
// (matcher/literal_snapshot.h): the embedded snapshot is what the code
// extracts now, start-up takes every built-in rule's literals from it, and a
// stale, foreign or damaged snapshot is never used: the literals are
// extracted again and every rule still matches.
#include "matcher/literal_snapshot.h"

#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "matcher/rule_pack.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

std::vector<Rule> BuiltinRules() {
  std::vector<Rule> rules;
  for (const RulePackText& builtin : BuiltinRulePacks()) {
    Diagnostics diags;
    for (Rule& r : ParseRulePack(builtin.text, builtin.file, diags).rules) {
      rules.push_back(std::move(r));
    }
  }
  return rules;
}

// Every match of a scan of `text` as "LINE RULE k=v;...".
Strings Scan(const RuleSet& set, std::string_view text) {
  Strings out;
  set.ScanBuffer(text, Origin::kAny,
                 [&](std::string_view, std::uint64_t n, std::vector<RuleMatch>& matches) {
                   for (const RuleMatch& m : matches) {
                     std::string f;
                     for (const auto& [k, v] : m.fields) {
                       f.append(k).append("=").append(v).append(";");
                     }
                     out.push_back(std::to_string(n) + " " + m.rule->id + " " + f);
                   }
                 });
  return out;
}

std::vector<Rule> OneRule(const std::string& pattern) {
  Diagnostics diags;
  std::vector<Rule> rules =
      ParseRulePack(
          "pack: t\nversion: 1\nrules:\n  - id: t.rule\n    sources: [kernel]\n"
          "    pattern: '" +
              pattern +
              "'\n    category: hardware\n    severity: critical\n"
              "    action: taint\n    summary: s\n",
          "t.yaml", diags)
          .rules;
  REQUIRE_FALSE(diags.has_errors());
  REQUIRE(rules.size() == 1);
  return rules;
}

TEST_CASE(
    "the embedded literal snapshot holds every built-in pattern, as the code extracts it now") {
  std::optional<LiteralSnapshot> snapshot = LiteralSnapshot::Read(BuiltinLiteralSnapshotBytes());
  REQUIRE(snapshot);
  const std::vector<Rule> rules = BuiltinRules();
  REQUIRE(rules.size() > 100);
  std::size_t with_literals = 0;
  for (const Rule& rule : rules) {
    CAPTURE(rule.id);
    const PatternLiterals* found = snapshot->Find(rule.pattern);
    REQUIRE(found);
    CHECK(*found == ExtractPatternLiterals(rule.pattern));
    if (!found->required.empty()) ++with_literals;
  }
  CHECK(with_literals > 100);  // not a snapshot of empty answers
  CHECK(snapshot->Find(rules.front().pattern + " ") == nullptr);
}

TEST_CASE(
    "the embedded snapshot holds every built-in pattern's alternative sets, as extracted now") {
  std::optional<LiteralSnapshot> snapshot = LiteralSnapshot::Read(BuiltinLiteralSnapshotBytes());
  REQUIRE(snapshot);
  std::size_t with_alternatives = 0;
  for (const Rule& rule : BuiltinRules()) {
    CAPTURE(rule.id);
    const auto found = snapshot->Alternatives(rule.pattern);
    REQUIRE(found);
    CHECK(*found == ExtractAlternativeLiteralSets(rule.pattern));
    if (found->size() > 1) ++with_alternatives;
  }
  CHECK(with_alternatives > 10);  // not a snapshot of empty answers
  CHECK_FALSE(snapshot->Alternatives("no such pattern"));
}

TEST_CASE("loading the built-in packs takes every rule's literals from the snapshot") {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  CHECK(RuleSetTesting::LiteralsFromSnapshot(*set) == set->size());
  // "Xid (", not " Xid (": since round 12 the rule also reads an Xid line quoted without
  // its "NVRM: " prefix, at the start of the message.
  CHECK(set->PrefilterLiterals("nvidia.xid") == Strings{"Xid ("});
}

TEST_CASE("a truncated, extended or corrupt literal snapshot is refused, never misread") {
  const std::string bytes(BuiltinLiteralSnapshotBytes());
  REQUIRE(LiteralSnapshot::Read(bytes));
  // Every cut of the first 4 KiB and a stride through the rest (the suite
  // runs under ASan: never a read out of bounds).
  for (std::size_t cut = 0; cut < bytes.size(); cut += cut < 4096 ? 1 : 89) {
    CHECK_FALSE(LiteralSnapshot::Read(std::string_view(bytes).substr(0, cut)));
  }
  CHECK_FALSE(LiteralSnapshot::Read(bytes + "x"));
  std::string foreign = bytes;
  foreign[0] = static_cast<char>(foreign[0] ^ 0x55);
  CHECK_FALSE(LiteralSnapshot::Read(foreign));
  // The entry count (after the layout word and the digest) claims more
  // entries than bytes remain.
  std::string huge = bytes;
  const std::size_t count_at = 4 + 4 + kLiteralCodeDigest.size();
  for (std::size_t i = count_at; i < count_at + 4; ++i) huge[i] = '\xff';
  CHECK_FALSE(LiteralSnapshot::Read(huge));
  // The same pattern twice is not a snapshot fl-snapshot-rules wrote.
  const std::vector<Rule> one = OneRule("GPU has fallen off the bus");
  std::string twice = SerializeLiteralSnapshot({one[0].pattern});
  REQUIRE(LiteralSnapshot::Read(twice));
  const std::string entry = twice.substr(count_at + 4);
  twice[count_at] = 2;
  CHECK_FALSE(LiteralSnapshot::Read(twice + entry));
}

TEST_CASE("an edited pattern never gets the literals of the pattern it replaced") {
  // The snapshot knows "... the bus"; the rule now also matches "the rails".
  const std::string snapshot = SerializeLiteralSnapshot({"GPU has fallen off the bus"});
  Diagnostics diags;
  auto set = RuleSetTesting::CompileWithSnapshots(OneRule("GPU has fallen off the (?:bus|rails)"),
                                                  {}, diags, snapshot);
  REQUIRE(set);
  CHECK(RuleSetTesting::LiteralsFromSnapshot(*set) == 0);
  CHECK(set->PrefilterLiterals("t.rule") == Strings{"GPU has fallen off the "});
  CHECK(Scan(*set, "noise\nNVRM: GPU has fallen off the rails\n") == Strings{"2 t.rule "});
}

TEST_CASE("a snapshot written by other extraction code is refused, and the rule still matches") {
  // A snapshot whose entry for the rule's pattern holds another pattern's
  // literal: made by writing the snapshot of a pattern of the same length
  // and putting the rule's pattern in its place.
  const std::string pattern = "GPU has fallen off bus";
  const std::string decoy = "qqqq-never-in-any-line";
  REQUIRE(pattern.size() == decoy.size());
  auto wrong_entry = [&](std::string_view digest) {
    std::string bytes = SerializeLiteralSnapshot({decoy}, digest);
    bytes.replace(bytes.find(decoy), decoy.size(), pattern);  // the key; the literal stays
    return bytes;
  };
  const std::string line = "noise\nNVRM: GPU has fallen off bus\n";

  // Control: with this code's digest the entry is taken as it is (the
  // decoy's literal, never on the line), which is what makes a stale entry
  // dangerous...
  Diagnostics diags;
  auto trusted = RuleSetTesting::CompileWithSnapshots(OneRule(pattern), {}, diags,
                                                      wrong_entry(kLiteralCodeDigest));
  REQUIRE(trusted);
  CHECK(RuleSetTesting::LiteralsFromSnapshot(*trusted) == 1);
  CHECK(Scan(*trusted, line).empty());

  // ...and with another digest the whole snapshot is refused: the literal
  // is extracted from the pattern and the line matches.
  auto stale = RuleSetTesting::CompileWithSnapshots(OneRule(pattern), {}, diags,
                                                    wrong_entry("older-extraction-code"));
  REQUIRE(stale);
  CHECK(RuleSetTesting::LiteralsFromSnapshot(*stale) == 0);
  CHECK(stale->PrefilterLiterals("t.rule") == Strings{pattern});
  CHECK(Scan(*stale, line) == Strings{"2 t.rule "});
}

TEST_CASE("the built-in packs match the same lines with a damaged snapshot as with theirs") {
  std::ifstream in(std::string(FL_SOURCE_DIR) + "/tests/data/sample-node.log");
  REQUIRE(in);
  std::ostringstream log;
  log << in.rdbuf();

  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> loaded = LoadRules({}, {}, diags, texts);
  REQUIRE(loaded);
  const std::string damaged(BuiltinLiteralSnapshotBytes().substr(0, 1000));
  std::shared_ptr<const RuleSet> extracted =
      RuleSetTesting::CompileWithSnapshots(std::vector<Rule>(loaded->rules()), {}, diags, damaged);
  REQUIRE(extracted);
  CHECK(RuleSetTesting::LiteralsFromSnapshot(*extracted) == 0);
  const Strings want = Scan(*extracted, log.str());
  CHECK(want.size() >= 5);
  CHECK(Scan(*loaded, log.str()) == want);
}

}  // namespace
}  // namespace faultline
