// SPDX-License-Identifier: Apache-2.0
// The built-in packs' build-time snapshots (matcher/rule_snapshot.h): what
// parsing their YAML gives, field for field, and a broken snapshot is
// refused (the YAML is parsed instead), never misread.
#include "matcher/rule_snapshot.h"

#include <doctest/doctest.h>

#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

ParsedPack Parse(const RulePackText& text) {
  ParsedPack parsed;
  parsed.pack = ParseRulePack(text.text, text.file, parsed.diags);
  return parsed;
}

TEST_CASE("each built-in pack's snapshot is its YAML parsed, and reads back the same") {
  REQUIRE(!BuiltinRulePacks().empty());
  for (const RulePackText& builtin : BuiltinRulePacks()) {
    CAPTURE(builtin.file);
    REQUIRE(!builtin.snapshot.empty());
    // Serializing writes every field: equal bytes are equal packs.
    CHECK(SerializeParsedPack(Parse(builtin)) == builtin.snapshot);
    std::optional<ParsedPack> read = DeserializeParsedPack(builtin.snapshot);
    REQUIRE(read);
    CHECK(SerializeParsedPack(*read) == builtin.snapshot);
    CHECK(read->pack.rules.size() == Parse(builtin).pack.rules.size());
  }
}

TEST_CASE("a snapshot keeps the classify tables, tests and locations rules list and check show") {
  const RulePackText* xid = nullptr;
  for (const RulePackText& b : BuiltinRulePacks()) {
    if (b.file == "rules/nvidia-xid.yaml") xid = &b;
  }
  REQUIRE(xid);
  std::optional<ParsedPack> read = DeserializeParsedPack(xid->snapshot);
  REQUIRE(read);
  const Rule* rule = nullptr;
  for (const Rule& r : read->pack.rules) {
    if (r.id == "nvidia.xid") rule = &r;
  }
  REQUIRE(rule);
  REQUIRE(rule->classify);
  CHECK(rule->classify->capture == "xid");
  CHECK(rule->classify->table.size() > 10);
  CHECK(!rule->match_tests.empty());
  CHECK(rule->defined_at.file == "rules/nvidia-xid.yaml");
  CHECK(rule->defined_at.line > 0);
  CHECK(rule->pattern_at.line > rule->defined_at.line);
}

TEST_CASE("a pack's diagnostics travel in its snapshot") {
  const RulePackText broken{"rules/broken.yaml",
                            "pack: broken\nversion: 1\nrules:\n"
                            "  - id: a\n    sources: [kernel]\n    pattern: 'x'\n    colour: red\n",
                            {}};
  ParsedPack parsed = Parse(broken);
  REQUIRE(!parsed.diags.all().empty());
  std::optional<ParsedPack> read = DeserializeParsedPack(SerializeParsedPack(parsed));
  REQUIRE(read);
  REQUIRE(read->diags.all().size() == parsed.diags.all().size());
  for (std::size_t i = 0; i < parsed.diags.all().size(); ++i) {
    const Diagnostic& a = parsed.diags.all()[i];
    const Diagnostic& b = read->diags.all()[i];
    CHECK(a.code == b.code);
    CHECK(a.message == b.message);
    CHECK(a.where.line == b.where.line);
    CHECK(a.where.column == b.where.column);
    CHECK((a.level == b.level));
  }
}

TEST_CASE("a truncated, extended or foreign snapshot is refused and the YAML is parsed instead") {
  const RulePackText& builtin = BuiltinRulePacks().front();
  const std::string bytes(builtin.snapshot);
  // Every cut of the first 4 KiB and a stride through the rest: never read
  // out of bounds (the suite runs under ASan), never accepted.
  for (std::size_t cut = 0; cut < bytes.size(); cut += cut < 4096 ? 1 : 97) {
    CHECK_FALSE(DeserializeParsedPack(std::string_view(bytes).substr(0, cut)));
  }
  CHECK_FALSE(DeserializeParsedPack(bytes + "x"));
  std::string foreign = bytes;
  foreign[0] = static_cast<char>(foreign[0] ^ 0x55);
  CHECK_FALSE(DeserializeParsedPack(foreign));
  // A count that claims more items than bytes remain.
  std::string huge = bytes;
  for (std::size_t i = 4; i < 8; ++i) huge[i] = '\xff';
  CHECK_FALSE(DeserializeParsedPack(huge));

  RulePackText damaged{builtin.file, builtin.text, std::string_view(bytes).substr(0, 100)};
  CHECK(SerializeParsedPack(ReadBuiltinPack(damaged)) == builtin.snapshot);
}

}  // namespace
}  // namespace faultline
