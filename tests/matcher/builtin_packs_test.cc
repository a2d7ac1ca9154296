// SPDX-License-Identifier: Apache-2.0
// The built-in packs are rules/*.yaml, byte for byte, and they pass their tests.
#include <algorithm>
#include <filesystem>

#include <doctest/doctest.h>

#include "matcher/rule_tests.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

TEST_CASE("the embedded packs are exactly rules/*.yaml on disk") {
  std::vector<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(FL_SOURCE_DIR "/rules")) {
    if (entry.path().extension() == ".yaml") on_disk.push_back(entry.path().filename().string());
  }
  std::sort(on_disk.begin(), on_disk.end());
  std::vector<std::string> embedded;
  for (const RulePackText& pack : BuiltinRulePacks()) {
    embedded.push_back(std::filesystem::path(pack.file).filename().string());
    CHECK(pack.file.rfind("rules/", 0) == 0);
    CHECK_MESSAGE(pack.text == ReadFileForTest(FL_SOURCE_DIR "/" + pack.file),
                  pack.file << " differs from the file on disk: rebuild");
  }
  CHECK(embedded == on_disk);
}

TEST_CASE("the built-in packs load without errors and pass their embedded tests") {
  Diagnostics diags;
  SourceTexts texts;
  auto set = LoadRules({}, {}, diags, texts);
  REQUIRE_MESSAGE(set, diags.ToJson().dump(1));
  Diagnostics test_diags;
  RuleTestCounts counts = RunRuleTests(*set, test_diags);
  CHECK_MESSAGE(counts.failed == 0, test_diags.ToJson().dump(1));
  // Nor a summary that prints a capture empty (W203): users read them.
  CHECK_MESSAGE(test_diags.all().empty(), test_diags.ToJson().dump(1));
  MESSAGE(BuiltinRulePacks().size()
          << " packs, " << set->size() << " rules, " << counts.run << " embedded tests");
}

TEST_CASE("rule tests report T001-T004 at the test line") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'port (?P<port>\d+) (?P<state>up|down)'
    action: event
    tests:
      match:
        - 'nothing here'
        - line: 'port 1 up'
          fields: {port: '2'}
        - line: 'port 1 down'
          action: taint
      no_match:
        - 'port 3 up'
        - line: 'port 3 up'
          origin: pod
)");
  REQUIRE(l.set);
  Diagnostics d;
  RuleTestCounts counts = RunRuleTests(*l.set, d);
  CHECK(counts.run == 5);
  CHECK(counts.failed == 4);
  std::vector<std::string> got;
  for (const Diagnostic& x : d.all()) {
    got.push_back(x.code + "@" + std::to_string(x.where.line) + ":" +
                  std::to_string(x.where.column));
  }
  CHECK(got == std::vector<std::string>{"T001@10:11", "T002@11:11", "T004@13:11", "T003@16:11"});
}

TEST_CASE("W203: a summary that prints a capture empty for a test line is warned about") {
  // The first summary reads "GPU  failed (); drain" for 'GPU failed': the
  // pci and the error are optional in the pattern. Alternatives side by
  // side ("{err}{code}") are one run: empty only when all are.
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: bare
    sources: [kernel]
    pattern: 'GPU (?:(?P<pci>\d+) )?failed(?: err (?P<err>\d+)| code (?P<code>\d+))?'
    summary: 'GPU {pci} failed ({err}{code}); drain'
    tests:
      match:
        - 'GPU failed'
        - 'GPU 3 failed code 7'
      no_match: ['GPU ok']
  - id: sections
    sources: [kernel]
    pattern: 'GPU (?:(?P<pci>\d+) )?failed(?: err (?P<err>\d+)| code (?P<code>\d+))?'
    summary: 'GPU{? {pci}} failed{? ({err}{code})}; drain'
    tests:
      match: ['GPU failed', 'GPU 3 failed code 7']
      no_match: ['GPU ok']
)");
  REQUIRE(l.set);
  Diagnostics d;
  RuleTestCounts counts = RunRuleTests(*l.set, d);
  CHECK(counts.failed == 0);
  std::vector<std::string> got;
  for (const Diagnostic& x : d.all()) {
    got.push_back(x.code + "@" + std::to_string(x.where.line) + ": " + x.message);
  }
  const std::string hint = "' empty for this line; put it in an optional section";
  CHECK(got.size() == 3);
  CHECK(got.at(0).rfind("W203@10: rule 'bare': the summary prints capture 'pci" + hint, 0) == 0);
  CHECK(got.at(1).rfind("W203@10: rule 'bare': the summary prints capture 'err" + hint, 0) == 0);
  CHECK(got.at(2).rfind("W203@10: rule 'bare': the summary prints capture 'code" + hint, 0) == 0);
}

}  // namespace
}  // namespace faultline
