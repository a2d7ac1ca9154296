// SPDX-License-Identifier: Apache-2.0
// Capture's anchored matching at leading literals (matcher/anchored_capture.h)
// must give exactly what RE2's unanchored search gives: the same match and
// the same groups, on every line. Checked on every built-in rule and the
// bench sets' patterns, on their test lines and on lines built to reach the
// edge cases (the literal twice, a first occurrence that does not match,
// \b and ^ context, case, a match at the end of the line).
#include "matcher/anchored_capture.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "matcher/rule_set.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

// The literals as "text" or "(?i)text", for a CHECK.
std::vector<std::string> Leads(std::string_view pattern) {
  std::vector<std::string> out;
  for (const LeadingLiteral& l : LeadingLiterals(pattern)) {
    out.push_back((l.caseless ? "(?i)" : "") + l.text);
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST_CASE("leading literals are proven from the pattern's tree, conservatively") {
  CHECK(Leads(R"(amdgpu (?P<pci>[0-9a-f:.]+): GPU reset)") == Strings{"amdgpu "});
  CHECK(Leads(R"((?P<bond>bond[\w.-]*): link status down)") == Strings{"bond"});
  CHECK(Leads(R"(INFO: task (?P<comm>.+):(?P<pid>\d+) blocked)") == Strings{"INFO: task "});
  CHECK(Leads(R"(CUDA out of memory\. Tried)") == Strings{"CUDA out of memory. Tried"});
  CHECK(Leads(R"(\bEDAC (?P<mc>MC\d+))") == Strings{"EDAC MC"});
  // Case: a caseless literal is searched caselessly; a change of case ends it.
  CHECK(Leads(R"((?i)cuda (?:runtime )?error)") ==
        Strings{"(?i)cuda runtime error", "(?i)cuda error"});
  CHECK(Leads(R"(ab(?i)cd)") == Strings{"ab"});
  CHECK(Leads(R"(NVRM(?i:x))") == Strings{"NVRM"});
  // RE2 folds k with U+212A and s with U+017F: a caseless k or s ends it.
  CHECK(Leads(R"((?i)disk error)") == Strings{"(?i)di"});
  CHECK(Leads(R"((?i)kernel)").empty());
  // Alternations: one literal per branch, each must have one.
  CHECK(Leads(R"((?P<scope>Memory cgroup out of memory|Out of memory): Killed)") ==
        Strings{"Memory cgroup out of memory: Killed", "Out of memory: Killed"});
  CHECK(Leads(R"(NCCL (WARN|ERROR))") == Strings{"NCCL WARN", "NCCL ERROR"});
  CHECK(Leads(R"(ab|\d)").empty());
  CHECK(Leads(R"((?:|x)y)") == Strings{"y", "xy"});
  CHECK(Leads(R"((?:|x)\d)").empty());
  CHECK(Leads(R"((?:a|b|c|d|e|f|g|h|i)x)").empty());  // more than kMaxLeadingLiterals
  // A branch that ends in a class closes its own literal only: the prefix
  // that a rule makes optional (a device name before the message).
  CHECK(Leads(R"((?:amdgpu (?P<pci>[0-9a-f.:]+): |\b)ring (?P<ring>\w+) timeout)") ==
        Strings{"amdgpu ", "ring "});
  CHECK(Leads(R"((?:(?P<c>nvme\d+): |\b)I/O (?:tag )?\d+)") == Strings{"nvme", "I/O "});
  // An optional item is the item or nothing; after a repeated one, who knows.
  CHECK(Leads(R"((?:x)?y)") == Strings{"xy", "y"});
  CHECK(Leads(R"(x*y)") == Strings{"y", "x"});
  CHECK(Leads(R"(xy+z)") == Strings{"xy"});
  CHECK(Leads(R"((?:GPU\d+ )?RmInitAdapter)") == Strings{"GPU", "RmInitAdapter"});
  // Too many literals with the optional items read through: each closes.
  CHECK(Leads(R"((?:a|b|c|d)(?:x)?(?:y)?z)") == Strings{"a", "b", "c", "d"});
  // An optional, repeated or wildcard first item, a class, ^, non-ASCII.
  CHECK(Leads(R"((?:\d)?y)").empty());
  CHECK(Leads(R"(.*fallen off)").empty());
  CHECK(Leads(R"([Ee]rror)").empty());
  CHECK(Leads(R"(^INFO: task)").empty());
  CHECK(Leads(R"(\x{e9}t)").empty());
  CHECK(Leads(R"(\d+ errors)").empty());
  CHECK(Leads(R"(unbalanced (group)").empty());  // not RE2 syntax: none
}

// Both paths on one line: false (with a message) if they differ in any way.
bool SameAsUnanchored(const RE2& re, const std::vector<LeadingLiteral>& leads,
                      const std::string& line, ConfirmOrder order = ConfirmOrder::kGroupsAtOnce) {
  const int all = re.NumberOfCapturingGroups() + 1;
  int asked = 1;  // as CompileRuleSet: up to the highest named group
  for (const auto& [group, name] : re.CapturingGroupNames()) asked = std::max(asked, group + 1);
  std::vector<re2::StringPiece> want(static_cast<std::size_t>(all));
  std::vector<re2::StringPiece> got(static_cast<std::size_t>(asked));
  const bool want_match =
      re.Match(re2::StringPiece(line), 0, line.size(), RE2::UNANCHORED, want.data(), all);
  const bool got_match = MatchAtLeadingLiterals(re, leads, line, got.data(), asked, order);
  bool same = want_match == got_match;
  for (std::size_t g = 0; same && want_match && g < got.size(); ++g) {
    same = want[g].data() == got[g].data() && want[g].size() == got[g].size();
  }
  if (!same) {
    FAIL_CHECK("pattern " << re.pattern() << " on line \"" << line << "\" (order "
                          << static_cast<int>(order) << "): unanchored " << want_match
                          << ", anchored " << got_match);
  }
  return same;
}

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// How long `fn` takes.
template <typename Fn>
std::chrono::nanoseconds Took(Fn fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::steady_clock::now() - start;
}

// The bound for a capped search of `line`: a few times RE2's unanchored
// search of it (timed here, so load and sanitizers slow both), plus slack.
// One attempt per occurrence costs hundreds of times the search.
std::chrono::nanoseconds FewPasses(const RE2& re, const std::string& line) {
  std::vector<re2::StringPiece> g(static_cast<std::size_t>(re.NumberOfCapturingGroups() + 1));
  const auto once = Took([&] {
    re.Match(line, 0, line.size(), RE2::UNANCHORED, g.data(), static_cast<int>(g.size()));
  });
  return 50 * once + std::chrono::milliseconds(20);
}

// Lines built from `line` to reach the edge cases for `leads`.
std::vector<std::string> EdgeLines(const std::string& line,
                                   const std::vector<LeadingLiteral>& leads) {
  std::vector<std::string> out = {line, Cat({line, " ", line}), Cat({"x", line}), Cat({"_", line}),
                                  Cat({line, "x"})};
  // RE2's (?i) folds k with U+212A (KELVIN SIGN) and s with U+017F (LONG S).
  std::string folded;
  for (char c : line) {
    if (c == 'k' || c == 'K') {
      folded += "\xE2\x84\xAA";
    } else if (c == 's' || c == 'S') {
      folded += "\xC5\xBF";
    } else {
      folded += c;
    }
  }
  out.push_back(folded);
  for (const LeadingLiteral& l : leads) {
    std::string upper = l.text;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; });
    out.push_back(Cat({l.text, line}));  // an occurrence that does not match first
    out.push_back(Cat({l.text, l.text, line}));
    out.push_back(Cat({line, l.text}));  // an occurrence at the very end
    out.push_back(Cat({"a", l.text, " ", line}));
    out.push_back(Cat({upper, " ", line}));  // case
    const std::size_t at = line.find(l.text);
    if (at != std::string::npos) {
      out.push_back(line.substr(at));  // the match at 0
      out.push_back(Cat({line.substr(0, at), l.text, " ", line.substr(at)}));
      out.push_back(Cat({line.substr(0, at), "x", line.substr(at)}));  // \b before it
    }
  }
  return out;
}

std::vector<Rule> BenchAndBuiltinRules() {
  std::vector<Rule> rules;
  Diagnostics diags;
  for (const RulePackText& pack : BuiltinRulePacks()) {
    std::vector<Rule> r = LoadRulePack(pack.text, pack.file, diags);
    rules.insert(rules.end(), r.begin(), r.end());
  }
  for (const char* file : {"npd.yaml", "user-gpu.yaml", "user-host.yaml"}) {
    const std::string path = FL_SOURCE_DIR "/bench/sets/" + std::string(file);
    std::vector<Rule> r = LoadRulePack(ReadFileForTest(path), path, diags);
    rules.insert(rules.end(), r.begin(), r.end());
  }
  REQUIRE_MESSAGE(!diags.has_errors(), diags.ToJson().dump(1));
  return rules;
}

TEST_CASE("every built-in and bench rule: anchored at its literals = RE2 unanchored") {
  const std::vector<Rule> rules = BenchAndBuiltinRules();
  // Every rule's test lines, tried on every rule (near misses too).
  std::vector<std::string> lines;
  for (const Rule& rule : rules) {
    for (const RuleTest& t : rule.match_tests) lines.push_back(t.line);
    for (const RuleTest& t : rule.no_match_tests) lines.push_back(t.line);
  }
  RE2::Options options;
  options.set_log_errors(false);
  std::size_t with_leads = 0;
  std::size_t whole_literal_rules = 0;
  std::size_t compared = 0;
  std::size_t matched = 0;
  for (const Rule& rule : rules) {
    const RE2 re(rule.pattern, options);
    REQUIRE_MESSAGE(re.ok(), rule.id);
    // A rule without groups is confirmed by Matches (its literals, when it
    // is nothing but them): RE2's yes or no on every line.
    const AnchoredCapture capture;
    for (const std::string& line : lines) {
      if (capture.Matches(re, line) != RE2::PartialMatch(line, re)) {
        FAIL_CHECK(rule.id << " on \"" << line << "\": Matches differs from RE2");
        break;
      }
    }
    whole_literal_rules += WholeLiterals(rule.pattern).empty() ? 0 : 1;
    const std::vector<LeadingLiteral> leads = LeadingLiterals(rule.pattern);
    if (leads.empty()) continue;
    ++with_leads;
    // The rule's own lines get every edge case; the others are near misses.
    std::vector<std::string> own;
    for (const RuleTest& t : rule.match_tests) own.push_back(t.line);
    for (const RuleTest& t : rule.no_match_tests) own.push_back(t.line);
    for (const std::string& line : own) {
      for (const std::string& edge : EdgeLines(line, leads)) {
        ++compared;
        matched += RE2::PartialMatch(edge, re) ? 1 : 0;
        if (!SameAsUnanchored(re, leads, edge)) break;
        if (!SameAsUnanchored(re, leads, edge, ConfirmOrder::kSpanFirst)) break;
        if (!SameAsUnanchored(re, leads, edge, ConfirmOrder::kRejectFirst)) break;
      }
    }
    for (const std::string& line : lines) {
      ++compared;
      if (!SameAsUnanchored(re, leads, line)) break;
    }
  }
  MESSAGE(with_leads << " of " << rules.size() << " rules have leading literals; " << compared
                     << " lines compared, " << matched << " edge lines matched");
  // The bench sets' hot rules are among them (amdgpu, EDAC, mlx5_core, ...).
  CHECK(with_leads > rules.size() / 3);
  CHECK(whole_literal_rules > 0);
  CHECK(matched > 1000);
}

constexpr std::array<ConfirmOrder, 3> kOrders = {
    ConfirmOrder::kGroupsAtOnce, ConfirmOrder::kSpanFirst, ConfirmOrder::kRejectFirst};

TEST_CASE("every confirm order gives RE2's unanchored match and groups on the cases it meets") {
  // Pattern, then lines. The span first (kSpanFirst) must find the same
  // groups on the span as on the whole line: a leftmost match that is not
  // the longest, a group that matches empty or not at all, \b and $ at the
  // span's edge (context after it), lazy and greedy wildcards. The DFA
  // reject (kRejectFirst) must not reject a line with a later match.
  const std::vector<std::vector<std::string>> cases = {
      {R"(ab(?P<g>c|cd))", "abcd", "ab abcd", "abd abce"},
      {R"(ab(?P<g>c|cd)(?P<h>d?))", "abcd", "abcde"},
      {R"(err(?P<e>\d*)x(?P<f>y)?)", "errx", "err12x", "err12xy", "err1 errx"},
      {R"(key=(?P<v>.*?)(?:;|$))", "key=;", "key=a;b;", "key=abc", "k key="},
      {R"(err (?P<w>\w+)$)", "err abc", "err abc def", "err abc err def", "err a "},
      {R"(err(?P<m>.*)$)", "err", "err abc", "x err err"},
      {R"(fail.*\b(?P<code>\d+)\b)", "fail 12 34x 56", "fail 12 34x", "fail 7x", "fail a1 fail 9"},
      {R"(fail.*(?P<code>\d+)\b x)", "fail 12 x 34 x", "fail 1 xfail 2 x", "fail 5  x"},
      {R"(Xid.*?: (?P<code>\d+),)", "Xid: 79, pid", "Xid (PCI:0000:3b:00): 79, pid=1",
       "Xid: none Xid: 12,", "Xid Xid: 1 Xid: 2,", "Xid: 1"},
      {R"((?i)pcie bus error.*severity=(?P<sev>\w+))",
       "PCIe Bus Error: severity=Corrected, type=Physical severity=Uncorrected (Fatal)",
       "pcie bus error: severity=", "PCIE BUS ERROR severity=x pcie bus error"},
      {R"(NVRM: (?:.*Back to back (?P<what>GSP)|Rate at (?P<pci>[0-9a-f]{4})))",
       "NVRM: x Back to back GSP", "NVRM: Rate at 00ab Back to back GSP",
       "NVRM: NVRM: Rate at 1234"},
      {R"(io error.*dev (?P<dev>\w+), sector (?P<sector>\d+))",
       "io error, dev sda, sector 12 dev sdb, sector 34", "io error dev sda, sector x"},
      {R"(a(?P<x>.*)b(?P<y>.*)c)", "a1b2c3b4c", "abc", "aXbYcZ", "ab"},
      // $ and \b right after the span: RE2 must see the text past it.
      {R"(a(?P<x>b$)?(?P<y>b)?)", "abc", "ab", "abab"},
      {R"(a(?P<x>b\b)?(?P<y>b)?)", "abc", "ab c", "abbc"},
  };
  for (const std::vector<std::string>& c : cases) {
    const RE2 re(c[0]);
    REQUIRE_MESSAGE(re.ok(), c[0]);
    const std::vector<LeadingLiteral> leads = LeadingLiterals(c[0]);
    REQUIRE_MESSAGE(!leads.empty(), c[0]);
    for (std::size_t i = 1; i < c.size(); ++i) {
      for (const std::string& edge : EdgeLines(c[i], leads)) {
        for (ConfirmOrder order : kOrders) CHECK(SameAsUnanchored(re, leads, edge, order));
      }
    }
  }
}

TEST_CASE("a pattern that is nothing but literals matches where one of them occurs") {
  CHECK(Leads(R"(CrashLoopBackOff|ImagePullBackOff)") ==
        Strings{"CrashLoopBackOff", "ImagePullBackOff"});
  auto whole = [](std::string_view pattern) {
    std::vector<std::string> out;
    for (const LeadingLiteral& l : WholeLiterals(pattern)) {
      out.push_back((l.caseless ? "(?i)" : "") + l.text);
    }
    return out;
  };
  CHECK(whole(R"(CrashLoopBackOff|ImagePullBackOff)") ==
        Strings{"CrashLoopBackOff", "ImagePullBackOff"});
  CHECK(whole(R"(NCCL (WARN|ERROR))") == Strings{"NCCL WARN", "NCCL ERROR"});
  CHECK(whole(R"((?i)fallen off the gpu)") == Strings{"(?i)fallen off the gpu"});
  CHECK(whole(R"(a\.b)") == Strings{"a.b"});
  // Anything else in the pattern: not the literals alone.
  CHECK(whole(R"(\bEIO\b)").empty());  // a word boundary
  CHECK(whole(R"(NCCL (WARN|ERROR)\d)").empty());
  CHECK_FALSE(whole(R"(fallen off the bus)").empty());
  CHECK(whole(R"((?i)off the bus)").empty());    // a caseless s: RE2 folds U+017F
  CHECK(whole(R"(x?y)") == Strings{"xy", "y"});  // matches exactly where "y" occurs
  CHECK(whole(R"(^INFO)").empty());
  CHECK(whole(R"(INFO$)").empty());
  CHECK(whole(R"((?:|x))").empty());  // matches the empty string, everywhere
  // And AnchoredCapture::Matches says what RE2 says, literals or not.
  const std::vector<std::string> lines = {"pod x: Back-off restarting: CrashLoopBackOff",
                                          "ImagePullBackOff",
                                          "crashloopbackoff",
                                          "NCCL WARN x",
                                          "NCCL  WARN",
                                          "xEIO",
                                          "an EIO here",
                                          "FALLEN OFF THE GPU now",
                                          "a.b axb",
                                          ""};
  for (const char* pattern : {R"(CrashLoopBackOff|ImagePullBackOff)", R"(NCCL (WARN|ERROR))",
                              R"(\bEIO\b)", R"((?i)fallen off the gpu)", R"(a\.b)", R"((?:|x))"}) {
    const RE2 re(pattern);
    const AnchoredCapture capture;
    for (const std::string& line : lines) {
      CHECK_MESSAGE(capture.Matches(re, line) == RE2::PartialMatch(line, re),
                    pattern << " on \"" << line << "\"");
    }
  }
}

TEST_CASE("a pattern's wildcard repeats choose how its groups are found") {
  auto shape = [](std::string_view pattern) {
    const ConfirmShape s = ConfirmShapeOf(pattern);
    return std::pair{s.greedy_wildcard_inside, s.wildcard};
  };
  // A greedy .* with pattern after it: BitState would run to the line's end.
  CHECK(shape(R"((?i)pcie bus error.*severity=(?P<sev>\w+))") == std::pair{true, true});
  CHECK(shape(R"(NVRM: (?:.*Back to back|Rate))") == std::pair{true, true});
  CHECK(shape(R"(x[^\n]+y)") == std::pair{true, true});
  // Lazy, or at the end (before $ at most): no span first.
  CHECK(shape(R"(Xid.*?: (?P<code>\d+),)") == std::pair{false, true});
  CHECK(shape(R"(NVRM: Xid (?P<msg>.*)$)") == std::pair{false, true});
  CHECK(shape(R"(mlx5_core (?P<pci>\S+): health poll.*)") == std::pair{false, true});
  // Not wildcards: a class that stops at something else, a counted repeat.
  CHECK(shape(R"(name=(?P<name>[^,]*), x)") == std::pair{false, false});
  CHECK(shape(R"(CUDA out of memory\. Tried (?P<size>[\d.]+ [KMG]iB))") == std::pair{false, false});
  CHECK(shape(R"(a.{2,}b)") == std::pair{false, false});
  CHECK(shape(R"(unbalanced (group)") == std::pair{false, false});
}

TEST_CASE("a rule whose lines mostly fail asks the DFA first, and keeps RE2's answers") {
  RE2 re(R"(Xid.*?: (?P<code>\d+),)");
  const AnchoredCapture capture;
  std::vector<re2::StringPiece> g(2);
  std::vector<re2::StringPiece> want(2);
  CHECK(capture.NextOrder() == ConfirmOrder::kGroupsAtOnce);  // nothing counted yet
  const std::string miss = "epoch 30: checked Xid counters on all GPUs: none";
  const std::string hit = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x";
  auto same = [&](const std::string& line) {
    const bool m = capture.Match(re, line, g.data(), 2);
    const bool w = re.Match(line, 0, line.size(), RE2::UNANCHORED, want.data(), 2);
    return m == w && (!m || (g[0] == want[0] && g[1] == want[1]));
  };
  for (std::uint32_t i = 0; i < AnchoredCapture::kMinCountedLines; ++i) {
    CHECK(same(i % 3 == 0 ? hit : miss));
  }
  CHECK(capture.NextOrder() == ConfirmOrder::kRejectFirst);  // a third matched
  for (int i = 0; i < 40; ++i) CHECK(same(i % 3 == 0 ? hit : miss));
  for (int i = 0; i < 80; ++i) CHECK(same(hit));
  CHECK(capture.NextOrder() == ConfirmOrder::kGroupsAtOnce);  // most matched
  // A greedy wildcard inside: the span first, counted or not.
  RE2 pcie(R"((?i)pcie bus error.*severity=(?P<sev>\w+))");
  const AnchoredCapture span;
  const std::string line = "AER: PCIe Bus Error: severity=Corrected, type=Physical Layer";
  REQUIRE(span.Match(pcie, line, g.data(), 2));
  CHECK(g[1] == "Corrected");
  CHECK(span.NextOrder() == ConfirmOrder::kSpanFirst);
}

TEST_CASE("the text before the literal is context: \\b and ^ see it") {
  RE2 word(R"(\bfoo(?P<n>\d))");
  const std::vector<LeadingLiteral> foo = {{"foo", false}};
  std::vector<re2::StringPiece> g(2);
  // "xfoo1": no word boundary before foo; the second occurrence matches.
  REQUIRE(MatchAtLeadingLiterals(word, foo, "xfoo1 foo2", g.data(), 2));
  CHECK(g[1] == "2");
  CHECK_FALSE(MatchAtLeadingLiterals(word, foo, "xfoo1", g.data(), 2));
  CHECK(SameAsUnanchored(word, foo, "xfoo1 foo2"));
  // ^ must not match at a literal past the line's start.
  RE2 caret(R"((?P<a>^)?foo(?P<n>\d))");
  REQUIRE(MatchAtLeadingLiterals(caret, foo, "xfoo1", g.data(), 2));
  CHECK(g[1].data() == nullptr);
  CHECK(SameAsUnanchored(caret, foo, "xfoo1"));
  CHECK(SameAsUnanchored(caret, foo, "foo1"));
  RE2 not_word(R"(\Bfoo(?P<n>\d))");
  CHECK(SameAsUnanchored(not_word, foo, "foo1 xfoo2"));
}

TEST_CASE("a caseless k or s is not searched as ASCII: RE2 folds more into it") {
  RE2 kelvin(R"((?i)kernel: (?P<what>\w+))");
  const std::string line =
      "\xE2\x84\xAA"
      "ernel: panic";  // U+212A, then "ernel"
  REQUIRE(RE2::PartialMatch(line, kelvin));
  CHECK(SameAsUnanchored(kelvin, LeadingLiterals(kelvin.pattern()), line));
  RE2 disk(R"((?i)disk (?P<dev>\w+) failed)");
  CHECK(SameAsUnanchored(disk, LeadingLiterals(disk.pattern()), "di\xC5\xBFk sda failed"));
}

TEST_CASE("a line of many non-matching occurrences costs a few passes, not one per occurrence") {
  // Each anchored attempt of "Xid.*?: ..." reads the rest of the line: one
  // per occurrence made 64 KiB of "Xid: " cost 0.5 s (quadratic); past
  // kMaxAnchoredAttempts the unanchored search takes over.
  RE2 re(R"(Xid.*?: (?P<code>\d+),)");
  const std::vector<LeadingLiteral> leads = LeadingLiterals(re.pattern());
  REQUIRE(leads.size() == 1);
  std::string line;
  for (int i = 0; i < 32 * 1024; ++i) line += "Xid: ";  // 160 KiB
  std::vector<re2::StringPiece> g(2);
  // Capped: under a millisecond; uncapped: 3.2 s.
  bool matched = true;
  const auto took = Took([&] { matched = MatchAtLeadingLiterals(re, leads, line, g.data(), 2); });
  CHECK_FALSE(matched);
  CHECK(took < FewPasses(re, line));
  // The match past the cap is still the unanchored one.
  line += "Xid: 79, pid=1";
  CHECK(SameAsUnanchored(re, leads, line));
  REQUIRE(MatchAtLeadingLiterals(re, leads, line, g.data(), 2));
  CHECK(g[1] == "79");
}

TEST_CASE("a rule's many non-matching literal occurrences on one line: bounded in a scan") {
  // With one anchored attempt per occurrence, 64 KiB of "Xid: " cost 80 s
  // in `faultline scan`.
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: xid
    sources: [kernel]
    pattern: 'Xid.*?: (?P<code>\d+),'
    summary: 'Xid {code}'
)");
  REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
  std::string line;
  for (int i = 0; i < 6 * 1024; ++i) line += "Xid: ";  // 30 KiB
  // As the scan runs a candidate rule (not through the RE2::Set first).
  const std::vector<std::uint32_t> candidate = {0};
  std::vector<RuleMatch> out;
  // Capped: under a millisecond; uncapped: 0.12 s (80 s at 64 KiB).
  CHECK(Took([&] { l.set->MatchCandidates(line, Origin::kKernel, candidate, out); }) <
        FewPasses(RE2(R"(Xid.*?: (?P<code>\d+),)"), line));
  CHECK(out.empty());
  l.set->MatchCandidates(line + "Xid: 79, pid=1", Origin::kKernel, candidate, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].fields.at("code") == "79");
}

TEST_CASE("a rule with a leading literal: the leftmost match and its fields") {
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: bond
    sources: [kernel]
    pattern: '(?P<bond>bond[\w.-]*): link status definitely down for interface (?P<slave>\w+)'
    summary: '{bond} lost {slave}'
  - id: cuda
    sources: [kernel]
    pattern: '(?i)cuda error: (?P<what>[a-z ]+)'
    summary: '{what}'
)");
  REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
  std::vector<RuleMatch> out;
  // "bond" first occurs where the rule does not match; then twice more.
  l.set->Match(
      "bonding: bond0: link status definitely down for interface eth1, "
      "bond1: link status definitely down for interface eth2",
      Origin::kKernel, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].fields.at("bond") == "bond0");
  CHECK(out[0].fields.at("slave") == "eth1");
  out.clear();
  l.set->Match("app: CUDA cudA Error: device lost", Origin::kKernel, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].fields.at("what") == "device lost");
}

}  // namespace
}  // namespace faultline
