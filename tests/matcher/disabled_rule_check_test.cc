// SPDX-License-Identifier: Apache-2.0
// A built-in rule that an override only disables is not compiled at load
// (its checks passed at build time); every other rule is checked as before,
// disabled or not: a changed pattern, summary or capture use, a user's own
// rule, a replaced built-in pack, and limits smaller than the build's.
#include <doctest/doctest.h>

#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

const char* const kDisableThree = R"(pack: local
version: 1
rules:
  - id: amd.ras-uncorrectable
    override: true
    disabled: true
  - id: amd.ras-correctable
    override: true
    disabled: true
    description: 'not on our nodes'
  - id: amd.bad-page-threshold
    override: true
    disabled: true
)";

TEST_CASE("the skip's premise: every built-in rule, enabled or not, checks without a diagnostic") {
  std::vector<Rule> rules = BuiltinRules();
  const std::size_t count = rules.size();
  for (Rule& rule : rules) rule.disabled = false;  // none is marked checked_at_build here
  Diagnostics diags;
  auto set = RuleSet::Compile(std::move(rules), {}, diags);
  REQUIRE_MESSAGE(set, diags.ToJson().dump(1));
  CHECK(RuleSetTesting::RulesChecked(*set) == count);
}

TEST_CASE("built-in rules an override only disables are not compiled at load") {
  const std::size_t builtin = BuiltinRules().size();
  Loaded all = LoadWithBuiltins("pack: local\nversion: 1\n");
  REQUIRE_MESSAGE(all.set, all.diags.ToJson().dump(1));
  // Enabled built-in rules are not compiled at load either: each at its
  // first use (deferred_regex_test.cc).
  CHECK(RuleSetTesting::RulesChecked(*all.set) == 0);
  CHECK(RuleSetTesting::RegexDeferred(*all.set) == builtin);

  Loaded l = LoadWithBuiltins(kDisableThree);
  REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
  CHECK(l.diags.all().empty());
  CHECK(l.set->rules().size() == builtin);
  CHECK(l.set->size() == builtin - 3);  // enabled rules
  CHECK(RuleSetTesting::RulesChecked(*l.set) == 0);
  CHECK(RuleSetTesting::RegexDeferred(*l.set) == builtin - 3);
  // Disabled all the same: the amdgpu line no longer matches.
  std::vector<RuleMatch> out;
  l.set->Match("amdgpu 0000:03:00.0: amdgpu: 2 uncorrectable hardware errors detected in umc block",
               Origin::kKernel, out);
  for (const RuleMatch& m : out) CHECK(m.rule->id != "amd.ras-uncorrectable");
}

TEST_CASE("a disabled built-in rule whose override changes what the build checked is checked") {
  struct Case {
    const char* key_lines;  // the override's keys besides id, override and disabled
    const char* code;
    const char* where;
    const char* says;
  };
  const Case cases[] = {
      {"    pattern: 'amdgpu ('\n", "E104", "7:14", "invalid regex"},
      {"    summary: '{nosuch} on {pci}'\n", "E105", "7:14", "'nosuch' used in summary"},
      {"    threshold: {count: 2, window: 1h, key: [nosuch]}\n", "E105", "7:16",
       "'nosuch' used in threshold.key"},
      {"    peer: nosuch\n", "E105", "7:11", "'nosuch' used in peer"},
      {"    classify: {capture: nosuch, values: {'1': {severity: info}}}\n", "E105", "7:25",
       "'nosuch' used in classify.capture"},
      {"    tests:\n      match:\n        - line: 'x'\n          fields: {nosuch: '1'}\n", "E105",
       "9:11", "'nosuch' used in test fields"},
      // Not a key the build checked, but the rule is checked again all the
      // same (only disabled and description keep the mark): no diagnostic.
      {"    severity: info\n", "", "", ""},
  };
  for (const Case& c : cases) {
    const std::string keys = c.key_lines;
    CAPTURE(keys);
    const std::string pack = std::string("pack: local\nversion: 1\nrules:\n") +
                             "  - id: amd.ras-uncorrectable\n    override: true\n" +
                             "    disabled: true\n" + c.key_lines;
    Loaded l = LoadWithBuiltins(pack);
    if (*c.code == '\0') {
      REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
      CHECK(RuleSetTesting::RulesChecked(*l.set) == 1);  // the overridden rule
      CHECK(RuleSetTesting::RegexDeferred(*l.set) == l.set->rules().size() - 1);
      continue;
    }
    CHECK_FALSE(l.set);
    INFO(l.diags.ToJson().dump());
    CHECK(l.Where(c.code) == std::vector<std::string>{c.where});
    CHECK(l.Message(c.code).find(c.says) != std::string::npos);
    CHECK(l.diags.error_count() == 1);
  }
}

TEST_CASE("a user's own disabled rule with a broken regex is still E104") {
  Loaded l = LoadPack(R"(pack: mine
version: 1
rules:
  - id: mine.broken
    sources: [kernel]
    disabled: true
    pattern: 'oops ('
)");
  CHECK_FALSE(l.set);
  CHECK(l.Where("E104") == std::vector<std::string>{"7:14"});
}

TEST_CASE("a local copy of a built-in pack is checked in full, its disabled rules too") {
  // A file with a built-in pack's name replaces that pack (load_rules.cc):
  // its rules are the operator's, not what the build checked.
  Loaded l = LoadWithBuiltins(R"(pack: amd-gpu
version: 1
rules:
  - id: amd.ras-uncorrectable
    sources: [kernel]
    disabled: true
    pattern: 'amdgpu ('
)");
  CHECK_FALSE(l.set);
  CHECK(l.Where("E104") == std::vector<std::string>{"7:14"});
}

TEST_CASE("limits smaller than the build's check a disabled built-in rule too (E111)") {
  CompileOptions tiny;
  tiny.max_program_size = 1;  // every pattern is larger
  Loaded l = LoadWithBuiltins(kDisableThree, tiny);
  CHECK_FALSE(l.set);
  // One E111 for every built-in rule, the three disabled ones included.
  CHECK(l.Where("E111").size() == BuiltinRules().size());
}

}  // namespace
}  // namespace faultline
