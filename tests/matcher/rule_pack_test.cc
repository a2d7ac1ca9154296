// SPDX-License-Identifier: Apache-2.0
// The rule pack loader: every diagnostic code at its exact line and column.
#include "matcher/rule_pack.h"

#include <sstream>

#include <doctest/doctest.h>

#include "base/suggest.h"
#include "matcher/rule_tests.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Strings = std::vector<std::string>;

const char* const kGoodPack = R"(pack: good
version: 1
defaults:
  sources: [kernel]
  category: hardware
rules:
  - id: gpu.xid
    pattern: 'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)'
    severity: critical
    action: taint
    summary: 'Xid {xid} on {pci}'
    tests:
      match:
        - line: 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1'
          fields: {xid: '79', pci: '0000:3b:00'}
      no_match:
        - 'NVRM: GPU at PCI:0000:3b:00'
)";

TEST_CASE("a valid pack loads with defaults applied and no diagnostics") {
  Loaded l = LoadPack(kGoodPack);
  REQUIRE(l.set);
  CHECK(l.diags.all().empty());
  REQUIRE(l.set->rules().size() == 1);
  const Rule& r = l.set->rules()[0];
  CHECK(r.id == "gpu.xid");
  CHECK(r.pack == "good");
  CHECK(r.category == "hardware");
  CHECK(r.sources == std::vector<Origin>{Origin::kKernel});
  CHECK(r.severity == Severity::kCritical);
  CHECK(r.action == Action::kTaint);
  CHECK(r.defined_at.line == 7);
  CHECK(r.defined_at.column == 9);
  CHECK(r.pattern_at.line == 8);
  CHECK(r.pattern_at.column == 14);
  CHECK(r.match_tests.size() == 1);
  CHECK(r.no_match_tests.size() == 1);
}

TEST_CASE("E001: a YAML syntax error is reported at yaml-cpp's 1-based place") {
  // yaml-cpp marks the character after a bad escape: 0-based 4:17 is 5:18.
  Loaded l = LoadPack("pack: x\nversion: 1\nrules:\n  - id: a\n    pattern: \"a\\qb\"\n");
  CHECK_FALSE(l.set);
  CHECK(l.Where("E001") == Strings{"5:18"});
  CHECK(l.Message("E001") == "yaml syntax error: unknown escape character: q");
}

TEST_CASE("E002: a missing file is reported, not thrown") {
  Loaded l;
  RuleSources sources;
  sources.builtin = false;
  sources.paths = {"/nonexistent/faultline/pack.yaml"};
  l.set = LoadRules(sources, {}, l.diags, l.texts);
  CHECK_FALSE(l.set);
  CHECK(l.Has("E002"));
}

TEST_CASE("E003: a key of the wrong type names the expected type") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: kernel
    pattern: 'x'
)");
  CHECK(l.Where("E003") == Strings{"5:14"});
  CHECK(l.Message("E003") == "sources must be a list of strings");
}

TEST_CASE("E101: an unknown key gets a did-you-mean at the key itself") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'abc'
    sevrity: critical
)");
  CHECK(l.Where("E101") == Strings{"7:5"});
  CHECK(l.Message("E101") == "unknown key 'sevrity' in rule; did you mean 'severity'?");
}

TEST_CASE("E102: missing pack, version, id, pattern and sources are each reported") {
  Loaded l = LoadPack(R"(description: nothing
rules:
  - description: no id
    pattern: 'x'
    sources: [kernel]
  - id: b
)");
  // pack and version (at the top), the id of rule 1, pattern and sources of rule 2.
  CHECK(l.Where("E102") == Strings{"1:1", "1:1", "3:5", "6:9", "6:9"});
}

TEST_CASE("E103: a duplicate rule id is reported at both places, also across packs") {
  const std::string a =
      "pack: a\nversion: 1\nrules:\n  - id: dup\n    sources: [kernel]\n    pattern: 'x'\n";
  const std::string b =
      "pack: b\nversion: 1\nrules:\n  - id: other\n    sources: [kernel]\n    pattern: 'y'\n  - "
      "id: dup\n    sources: [pod]\n    pattern: 'z'\n";
  Loaded l = LoadPacks({{"a.yaml", a}, {"b.yaml", b}});
  CHECK_FALSE(l.set);
  CHECK(l.Where("E103") == Strings{"7:9", "4:9"});
  CHECK(l.Message("E103").find("add 'override: true'") != std::string::npos);
}

TEST_CASE("E103: a duplicate pack name is reported at both places") {
  const std::string a = "pack: same\nversion: 1\n";
  Loaded l = LoadPacks({{"a.yaml", a}, {"b.yaml", a}});
  CHECK(l.Where("E103") == Strings{"1:7", "1:7"});
}

TEST_CASE("E104: an invalid regex carries RE2's message at the pattern") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'Killed process (\d+'
)");
  CHECK(l.Where("E104") == Strings{"6:14"});
  CHECK(l.Message("E104") == "invalid regex: missing ): Killed process (\\d+");
}

TEST_CASE("E105: captures used but not defined are reported in every place") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'port (?P<port>\d+)'
    summary: 'down on {device}'
    threshold: {count: 2, window: 1h, key: [dev]}
    classify:
      capture: kind
      values:
        "1": {summary: '{nope}'}
    tests:
      match:
        - line: 'port 1'
          fields: {prot: '1'}
)");
  // threshold.key, summary, classify.capture, the classify summary, the test field.
  CHECK(l.Where("E105") == Strings{"8:16", "7:14", "10:16", "10:16", "15:11"});
}

TEST_CASE("E105: a peer capture the pattern does not define is reported at its value") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [pod]
    pattern: 'from peer (?P<addr>\S+)'
    peer: peer
)");
  CHECK(l.Where("E105") == Strings{"7:11"});
  CHECK(l.Message("E105") ==
        "capture 'peer' used in peer is not defined by the pattern of rule 'a'");
}

TEST_CASE("E106: a bad duration is reported at its value") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'x'
    expire: 10 minutes
)");
  CHECK(l.Where("E106") == Strings{"7:13"});
}

TEST_CASE("E107, E108, E109: unknown action, severity and source, with hints") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernal, pod]
    pattern: 'x'
    action: tiant
    severity: fatal
)");
  CHECK(l.Where("E107") == Strings{"7:13"});
  CHECK(l.Message("E107") == "unknown action 'tiant'; did you mean 'taint'?");
  CHECK(l.Where("E108") == Strings{"8:15"});
  CHECK(l.Where("E109") == Strings{"5:15"});
  CHECK(l.Message("E109") == "unknown source 'kernal'; did you mean 'kernel'?");
}

TEST_CASE("E110: an override of an unknown id is an error") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: nowhere
    override: true
    disabled: true
)");
  CHECK(l.Where("E110") == Strings{"4:9"});
}

TEST_CASE("E111: a regex program over the size limit is refused") {
  CompileOptions small;
  small.max_program_size = 50;
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'a{1,60}b'
)",
                      small);
  CHECK(l.Where("E111") == Strings{"6:14"});
}

TEST_CASE("E112: bad classify value keys: empty list entries and inverted ranges") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: '(?P<xid>\d+)'
    classify:
      capture: xid
      values:
        "13,,31": {action: event}
        "150-144": {action: event}
        "1-x": {action: event}
)");
  CHECK(l.Where("E112") == Strings{"10:9", "11:9", "12:9"});
}

TEST_CASE("E113: a threshold without a window or with count 0") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'x'
    threshold: {count: 0, window: 1h}
  - id: b
    sources: [kernel]
    pattern: 'y'
    threshold:
      count: 3
)");
  CHECK(l.Where("E113") == Strings{"7:24", "12:7"});
}

TEST_CASE("E114: ids and pack names with capitals or spaces are refused") {
  Loaded l = LoadPack(R"(pack: My Pack
version: 1
rules:
  - id: Gpu.Xid
    sources: [kernel]
    pattern: 'x'
)");
  CHECK(l.Where("E114") == Strings{"1:7", "4:9"});
}

TEST_CASE("W201: a rule without tests gets a warning but still loads") {
  Loaded l = LoadPack(
      "pack: x\nversion: 1\nrules:\n  - id: a\n    sources: [kernel]\n    pattern: 'abc'\n");
  CHECK(l.set);
  CHECK(l.Where("W201") == Strings{"4:9"});
}

TEST_CASE("every mistake in a pack is reported in one run") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: '(unclosed'
  - id: b
    sources: [kernal]
    pattern: 'x'
    sevrity: info
)");
  CHECK(l.Has("E104"));
  CHECK(l.Has("E109"));
  CHECK(l.Has("E101"));
}

// Issue 11.10: a huge expire parsed, and overflowed the clocks it was added to.
TEST_CASE("E106: a duration beyond the maximum is refused at its place, with the reason") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [kernel]
    pattern: 'abc'
    expire: 1000000000d
)");
  CHECK(l.Where("E106") == Strings{"7:13"});
  CHECK(l.Message("E106") ==
        "bad duration for expire: '1000000000d' is longer than the maximum, 3650d (10 years)");
}

// Issue 11.7: `journal:` names the units and users a journal record must come from.
TEST_CASE("journal constraints: every mistake is reported at its place") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: a
    sources: [journal]
    journal: {unit: [x.service]}
    pattern: 'abc'
  - id: b
    sources: [journal]
    journal: {units: x.service, uids: [0, -1, root]}
    pattern: 'abc'
  - id: c
    sources: [kernel]
    journal: {uids: [0]}
    pattern: 'abc'
  - id: d
    sources: [journal]
    journal: [nvidia-dcgm.service]
    pattern: 'abc'
  - id: e
    sources: [journal]
    journal: {}
    pattern: 'abc'
)");
  CHECK(l.Where("E101") == Strings{"6:15"});
  CHECK(l.Message("E101") == "unknown key 'unit' in journal; did you mean 'units'?");
  CHECK(l.Where("E003") == Strings{"6:14", "10:22", "10:43", "10:47", "14:14", "18:14", "22:14"});
  CHECK(!l.set);
}

TEST_CASE("journal constraints: a journal record passes only from a listed unit and user") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: dbe
    sources: [journal, pod]
    journal: {units: [nvidia-dcgm.service], uids: [0]}
    pattern: 'volatile double-bit ECC'
    action: taint
)");
  REQUIRE(l.set);
  const auto matches = [&](Origin origin, Labels labels) {
    LogRecord r;
    r.text = "nv-hostengine[1]: Detected 2 volatile double-bit ECC error(s) in GPU 1.";
    r.origin = origin;
    r.labels = std::move(labels);
    std::vector<RuleMatch> out;
    l.set->Match(r, out);
    return out.size();
  };
  CHECK(matches(Origin::kJournal, {{"unit", "nvidia-dcgm.service"}, {"uid", "0"}}) == 1);
  CHECK(matches(Origin::kJournal, {{"unit", "session-4.scope"}, {"uid", "1000"}}) == 0);
  CHECK(matches(Origin::kJournal, {{"unit", "nvidia-dcgm.service"}, {"uid", "1000"}}) == 0);
  CHECK(matches(Origin::kJournal, {{"unit", "cron.service"}, {"uid", "0"}}) == 0);
  CHECK(matches(Origin::kJournal, {}) == 0);  // unverifiable: no labels
  CHECK(matches(Origin::kPod, {}) == 1);      // the constraint is about journal records
  std::vector<RuleMatch> out;
  l.set->Match("Detected 2 volatile double-bit ECC", Origin::kJournal, out);
  CHECK(out.size() == 1);  // text alone (faultline scan): not checked, nothing is tainted
}

TEST_CASE("journal constraints: rule tests give labels, and an override may change them") {
  Loaded l = LoadPacks({{"a.yaml", R"(pack: a
version: 1
rules:
  - id: fm
    sources: [journal]
    journal: {units: [init.scope], uids: [0]}
    pattern: 'fabricmanager failed'
    tests:
      match:
        - line: 'fabricmanager failed'
          labels: {unit: init.scope, uid: '0'}
      no_match:
        - line: 'fabricmanager failed'
          labels: {unit: session-1.scope, uid: '1000'}
        - 'fabricmanager failed'
)"},
                        {"b.yaml", R"(pack: b
version: 1
rules:
  - id: fm
    override: true
    journal: {units: [my-fm.service]}
)"}});
  REQUIRE(l.set);
  Diagnostics d;
  const RuleTestCounts counts = RunRuleTests(*l.set, d);
  // The override moved the unit: the first test no longer matches (T001).
  CHECK(counts.failed == 1);
  CHECK(d.all().size() == 1);
  CHECK(d.all()[0].code == "T001");
  CHECK(d.all()[0].where.line == 10);
}

TEST_CASE("Print shows file:line:col, the source line and a caret under the column") {
  Diagnostics d;
  d.Error("E108", {"p.yaml", 2, 11}, "unknown severity 'fatal'");
  std::ostringstream out;
  d.Print(out, {{"p.yaml", "a: 1\nseverity: fatal\n"}});
  CHECK(out.str() ==
        "p.yaml:2:11: error: unknown severity 'fatal' [E108]\n"
        "   2 | severity: fatal\n"
        "     |           ^\n");
  nlohmann::json j = d.ToJson();
  CHECK(j[0]["code"] == "E108");
  CHECK(j[0]["line"] == 2);
  CHECK(j[0]["column"] == 11);
  CHECK(j[0]["level"] == "error");
}

TEST_CASE("did-you-mean suggests close keys only") {
  CHECK(EditDistance("sevrity", "severity") == 1);
  CHECK(DidYouMean("paterns", RuleKeys()) == "; did you mean 'pattern'?");
  CHECK(DidYouMean("frobnicate", RuleKeys()).empty());
}

TEST_CASE("LoadRulePack never throws on garbage") {
  Diagnostics d;
  for (const char* text :
       {"", "[", "- - -", "pack: [", "\t", "rules: 5", "pack: x\nrules: [1, 2]"}) {
    CHECK_NOTHROW(LoadRulePack(text, "g.yaml", d));
  }
}

TEST_CASE("classify values with a dash that are not numbers are exact values, not ranges") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: sxid
    sources: [kernel]
    pattern: 'SXid .*, (?P<kind>Non-fatal|Fatal) error'
    action: event
    classify:
      capture: kind
      values:
        "Non-fatal": {action: event, severity: warning}
        "Fatal": {action: taint, severity: critical}
)");
  CHECK_FALSE(l.Has("E112"));
  REQUIRE(l.set != nullptr);
  auto fatal = MatchLine(*l.set, "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Fatal error");
  auto nonfatal =
      MatchLine(*l.set, "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Non-fatal error");
  REQUIRE(fatal.size() == 1);
  REQUIRE(nonfatal.size() == 1);
  CHECK(fatal[0].action == Action::kTaint);
  CHECK(nonfatal[0].action == Action::kEvent);
  CHECK(nonfatal[0].severity == Severity::kWarning);
}

}  // namespace
}  // namespace faultline
