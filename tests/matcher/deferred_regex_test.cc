// SPDX-License-Identifier: Apache-2.0
// An enabled built-in rule's RE2 is built at the first line that needs it
// (matcher/rule_regex.h): a start no longer compiles all of them. What it
// matches, and how, must not change; a rule the build did not check (a
// user's, an override's new pattern) is still checked at load.
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/vocabulary.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

constexpr char kXid[] = "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, name=, GPU has fallen off the bus.";

// The built-in packs as shipped (with an empty local pack).
Loaded LoadBuiltins(CompileOptions options = {}) {
  Loaded l = LoadWithBuiltins("pack: local\nversion: 1\n", options);
  REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
  return l;
}

// The built-in rules with the build's mark taken off: compiled at load.
std::shared_ptr<const RuleSet> CompiledAtLoad() {
  std::vector<Rule> rules = BuiltinRules();
  for (Rule& rule : rules) rule.checked_at_build = false;
  Diagnostics diags;
  auto set = RuleSet::Compile(std::move(rules), {}, diags);
  REQUIRE_MESSAGE(set, diags.ToJson().dump(1));
  REQUIRE(RuleSetTesting::RegexDeferred(*set) == 0);
  return set;
}

std::vector<std::string> Describe(const std::vector<RuleMatch>& out) {
  std::vector<std::string> d;
  for (const RuleMatch& m : out) {
    std::string s = m.rule->id + " " + m.category + " " + std::string(SeverityName(m.severity)) +
                    " " + std::string(ActionName(m.action)) + " " + m.summary;
    for (const auto& [name, value] : m.fields) s.append(" ").append(name).append("=").append(value);
    d.push_back(s);
  }
  return d;
}

TEST_CASE("a start compiles no built-in rule's RE2, and a line builds only the rules it reaches") {
  Loaded l = LoadBuiltins();
  const std::size_t rules = l.set->size();
  CHECK(RuleSetTesting::RulesChecked(*l.set) == 0);
  CHECK(RuleSetTesting::RegexDeferred(*l.set) == rules);
  CHECK(RuleSetTesting::RegexBuilt(*l.set) == 0);

  std::vector<RuleMatch> out;
  l.set->Match(kXid, Origin::kKernel, out);
  REQUIRE(out.size() >= 1);
  CHECK(out[0].rule->id == "nvidia.xid");
  CHECK(out[0].fields.at("xid") == "79");
  const std::size_t built = RuleSetTesting::RegexBuilt(*l.set);
  CHECK(built >= 1);
  CHECK(built < rules / 4);  // the rules whose literals the line holds, not all

  out.clear();
  l.set->Match(kXid, Origin::kKernel, out);  // built once
  CHECK(RuleSetTesting::RegexBuilt(*l.set) == built);
}

TEST_CASE("every built-in rule matches its test lines as a rule compiled at load does") {
  Loaded deferred = LoadBuiltins();
  auto eager = CompiledAtLoad();
  std::size_t lines = 0;
  for (const Rule& rule : eager->rules()) {
    for (const auto* tests : {&rule.match_tests, &rule.no_match_tests}) {
      for (const RuleTest& t : *tests) {
        CAPTURE(rule.id);
        CAPTURE(t.line);
        for (Origin o : {Origin::kKernel, Origin::kJournal, Origin::kPod, Origin::kAny}) {
          std::vector<RuleMatch> a, b;
          deferred.set->Match(t.line, o, a);
          eager->Match(t.line, o, b);
          CHECK(Describe(a) == Describe(b));
        }
        ++lines;
      }
    }
  }
  CHECK(lines > 1000);
  CHECK(RuleSetTesting::RegexBuilt(*deferred.set) == deferred.set->size());
}

TEST_CASE("threads that reach one rule's first line at once all get its match") {
  Loaded l = LoadBuiltins();
  std::vector<std::vector<std::string>> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      std::vector<RuleMatch> out;
      l.set->Match(kXid, Origin::kKernel, out);
      seen[i] = Describe(out);
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(!seen[0].empty());
  for (const auto& s : seen) CHECK(s == seen[0]);
}

TEST_CASE("a built-in rule built at first use keeps the smaller per-rule budget's fallback") {
  CompileOptions small;
  small.rule_max_memory_bytes = 4096;  // too small for any program: the larger budget serves
  Loaded l = LoadBuiltins(small);
  CHECK(RuleSetTesting::RegexDeferred(*l.set) == l.set->size());
  std::vector<RuleMatch> out;
  l.set->Match(kXid, Origin::kKernel, out);
  REQUIRE(out.size() >= 1);
  CHECK(out[0].rule->id == "nvidia.xid");
}

TEST_CASE("an enabled built-in rule whose override changes its pattern is checked at load") {
  Loaded l = LoadWithBuiltins(R"(pack: local
version: 1
rules:
  - id: amd.ras-uncorrectable
    override: true
    pattern: 'amdgpu ('
)");
  CHECK_FALSE(l.set);
  CHECK(l.Where("E104") == std::vector<std::string>{"6:14"});
}

}  // namespace
}  // namespace faultline
