// SPDX-License-Identifier: Apache-2.0
// Rules without a prefilter literal (W202): a large scan finds their lines
// with one search per chunk (matcher/unfiltered_search.h). It must never
// lose a line: every test compares it with plain RE2 over each line's
// message, the way `faultline scan` reads a file (ScanRaw).
#include "matcher/unfiltered_search.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <re2/re2.h>

#include "matcher/byte_pairs.h"
#include "matcher/input_line.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

using Hits = std::set<std::pair<std::uint64_t, std::string>>;  // (line number, rule id)

// Patterns without a literal of 3 bytes or more, in the shapes users write:
// anchors that hold only in the message (after a dmesg or journal prefix),
// \b at its start, (?i), classes that hold '\n', matches across the
// "ident: " a journal line is rewritten to, UTF-8 and case folding.
const std::vector<std::string> kAsciiPatterns = {
    R"((?i)\b(?:hw|sw|fw)\s+\d{2,3}\s+(?:up|dn)\b)",
    R"(^\S+ \d+ [A-Z]{3,}:)",
    R"(\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\b.*\b(?:dn|off|err)\b)",
    R"(^[a-z]+: E\d)",
    R"(\w: \w)",
    R"(^[a-z]+.*: E\d)",
    R"(let.: hw)",
    R"([a-z]:.?\s?h)",
    R"(t[:=]\d?\s?[ah])",
    R"(t:[ a-c]h)",
    R"([a-z]:[0-9]{0,2} E)",
    R"(t: $)",
    R"(^ab$)",
    R"(\Ahw\z)",
    R"((?i)\bp\d\b)",
    R"([^x]{3}dn)",
    R"(\s{2}\d\b)",
    R"((?s)hw.up)",
    R"(a\S b)",
    R"(\x{3a}\d\dq)",
    R"(\Q]: \E[0-9])",
    R"((?P<a>\d)(?P<b>x)\b)",
    R"([\d:]+ E)",
    R"(\W{2}dn$)",
    R"(\D\d\Dq)",
    R"((?i)[^a-z\s]{2}up)",
};
// Patterns that are not ASCII, and classes that differ between engines.
const std::vector<std::string> kOtherPatterns = {
    R"(é\d)",
    R"((?i)ſw \d)",
    R"((?i)k\d\b)",
    R"(^.\d\d.$)",
    R"([[:^alpha:]]\d{3}[[:^alpha:]])",
    R"(\pL\d{2}\b)",
};

std::string YamlQuoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string PackOf(const std::vector<std::string>& patterns, bool with_literal_rule = true) {
  std::string pack = "pack: loose\nversion: 1\nrules:\n";
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    pack += "  - id: r" + std::to_string(i) + "\n    sources: [kernel, journal, pod]\n" +
            "    category: hardware\n    severity: warning\n    action: event\n" +
            "    pattern: " + YamlQuoted(patterns[i]) + "\n";
  }
  if (!with_literal_rule) return pack;
  // One rule with a literal, so that the literal prefilter runs beside.
  pack +=
      "  - id: lit\n    sources: [kernel, journal, pod]\n    category: hardware\n"
      "    severity: warning\n    action: event\n    pattern: 'fallen off the bus'\n";
  return pack;
}

// What `faultline scan` finds by plain RE2: each rule on each line's message.
Hits Expected(const std::vector<std::string>& patterns, std::string_view buffer) {
  std::vector<std::unique_ptr<RE2>> res;
  res.reserve(patterns.size() + 1);
  for (const std::string& p : patterns) res.push_back(std::make_unique<RE2>(p));
  res.push_back(std::make_unique<RE2>("fallen off the bus"));
  Hits out;
  std::uint64_t n = 0;
  for (std::size_t start = 0; start < buffer.size();) {
    std::size_t nl = buffer.find('\n', start);
    if (nl == std::string_view::npos) nl = buffer.size();
    ++n;
    const InputLine in = ParseInputLine(buffer.substr(start, nl - start));
    for (std::size_t r = 0; r < res.size(); ++r) {
      if (RE2::PartialMatch(in.text, *res[r])) {
        out.emplace(n, r + 1 == res.size() ? "lit" : "r" + std::to_string(r));
      }
    }
    start = nl + 1;
  }
  return out;
}

// What ScanRaw finds: the candidate lines, parsed, their candidate rules.
Hits Scanned(const RuleSet& set, std::string_view buffer) {
  Hits out;
  std::vector<RuleMatch> matches;
  set.ForEachCandidate(
      buffer, Origin::kAny,
      [&](std::string_view line, std::uint64_t n, std::span<const std::uint32_t> candidates) {
        const InputLine in = ParseInputLine(line);
        matches.clear();
        set.MatchCandidates(in.text, Origin::kAny, candidates, matches);
        for (const RuleMatch& m : matches) out.emplace(n, m.rule->id);
      });
  return out;
}

// Log lines in every format ScanRaw reads, around fragments that the
// patterns above match, nearly match, or match only in the message.
std::string Corpus(std::uint32_t seed, std::size_t lines) {
  static const std::vector<std::string> kBodies = {
      "hw 12 up",
      "HW 118 dn now",
      "fw 7 up",
      "sw  123\tDN",
      "p17 dn after 4 symbol errors",
      "Port 4 DN",
      "0000:3a:00.0 link dn, slot 4",
      "0000:3A:00.0 link dn",
      // The lines of user-loose's corpus that Vectorscan lost.
      "mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:754:(pid 46014): op_mod(0x1) failed, err(-22)",
      "ena 0000:00:05.0: Failed to process command 15 (opcode 17) comp_status 1 err -5",
      "E1128 01:02:03.123456    2211 kubelet.go:2412] sync",
      "t=97C",
      "ab",
      "hw",
      "a\vb",
      "a\v b",
      "x 12 ERR: y",
      "12x",
      "  7",
      ":42q",
      "x:12",
      "température 97é2",
      "sw 1",
      "K1 \u212a2",  // KELVIN SIGN: (?i)k matches it
      "\u00e912\u00e9",
      "#123#",
      "z\u03b142",
      "GPU has fallen off the bus.",
      "!!dn",
      "a1bq",
      "--up",
      "",
      "\xff\xfe hw 12 up",
  };
  static const std::vector<std::string> kIdents = {"kubelet", "nvidia-smi", "t", "sshd", "a"};
  std::mt19937 rng(seed);
  auto pick = [&](const auto& v) -> const auto& { return v[rng() % v.size()]; };
  std::string out;
  for (std::size_t i = 0; i < lines; ++i) {
    std::string body = pick(kBodies);
    if (rng() % 3 == 0) body.insert(0, pick(kBodies) + " ");
    std::string line;
    switch (rng() % 11) {
      case 0:
        line = body;
        break;
      case 1:
        line = "[ 1234.567890] " + body;
        break;
      case 2:
        line = "Nov 22 07:02:53 gpu-17 " + pick(kIdents) + "[" + std::to_string(rng() % 9999) +
               "]: " + body;
        break;
      case 3:
        line = "Nov 22 07:02:53 gpu-17 " + pick(kIdents) + ": " + body;
        break;
      case 4:
        line = "Nov 22 07:02:53 gpu-17 kernel: " + body;
        break;
      case 5:  // an empty message: "ident: " (a space the raw line lacks)
        line = "Nov 22 07:02:53 gpu-17 " + pick(kIdents) + (rng() % 2 ? "[12]:" : ":");
        break;
      case 6:  // JSON: the message is decoded (here: "hw 12 up" spelt with escapes)
        line = R"({"MESSAGE":"h\u0077 12\nup x\tp5 ab","_TRANSPORT":"kernel"})";
        if (rng() % 2) line = R"({"MESSAGE":"a: ","SYSLOG_IDENTIFIER":"t"})";
        break;
      case 7:
        line = "2026-11-22T07:02:53.123456789Z stdout F " + body;
        break;
      case 8:
        line = "[Sun Nov 22 07:02:53 2026] " + body;
        break;
      case 9:
        line = body + "\r";
        break;
      default:
        line = "2026-11-22T07:02:53+0000 gpu-17 " + pick(kIdents) + "[7]: " + body;
        break;
    }
    out += line;
    out += '\n';
  }
  return out;
}

Hits CheckScan(const std::vector<std::string>& patterns, const std::string& buffer) {
  Loaded l = LoadPack(PackOf(patterns));
  REQUIRE(l.set);
  RuleSetTesting::SearchUnfilteredFrom(*l.set, 0);
  CHECK_FALSE(RuleSetTesting::UnfilteredSearchPattern(*l.set, Origin::kAny).empty());
  Hits want = Expected(patterns, buffer);
  const Hits got = Scanned(*l.set, buffer);
  CHECK(got == want);
  if (got != want) {
    for (const auto& h : want) {
      if (!got.count(h)) MESSAGE("lost: line " << h.first << " rule " << h.second);
    }
    for (const auto& h : got) {
      if (!want.count(h)) MESSAGE("extra: line " << h.first << " rule " << h.second);
    }
  }
  return want;
}

TEST_CASE("RelaxForRawLines drops anchors and names, and lets ':' take a journal pid") {
  CHECK(RelaxForRawLines(R"(^a\bb$)") == "(?:)a(?:)b(?:)");
  CHECK(RelaxForRawLines(R"(\Aa\B\z)") == "(?:)a(?:)(?:)");
  CHECK(RelaxForRawLines("(?P<x>a)(b)") == "(?:a)(?:b)");
  CHECK(RelaxForRawLines("(?i)a(?s:.)") == R"((?i)a(?s:(?:(?:\[[^ \n]*\])?.)))");
  CHECK(RelaxForRawLines(R"(a:\s)") == R"(a(?:(?:\[[^ \n]*\])?:)\s)");
  CHECK(RelaxForRawLines(R"([^x]\s)") == R"((?:(?:\[[^ \n]*\])?[^x])\s)");
  // A ':' followed by what is never a space is not the journal's "ident: ".
  CHECK(RelaxForRawLines(R"(\d:\d:x:-[:]a.b)") == R"(\d:\d:x:-[:]a.b)");
  CHECK(RelaxForRawLines(R"(a:x?)") == R"(a(?:(?:\[[^ \n]*\])?:)x?)");
  CHECK(RelaxForRawLines(R"(a:[0-9a-f]{2}:[0-9]+:[x-]{0,2})") ==
        R"(a:[0-9a-f]{2}:[0-9]+(?:(?:\[[^ \n]*\])?:)[x-]{0,2})");
  CHECK(RelaxForRawLines(R"(a:[ a])") == R"(a(?:(?:\[[^ \n]*\])?:)[ a])");
  // '.' repeated without bound takes "[pid]" itself.
  CHECK(RelaxForRawLines("a.*b.+c.{2,}d.{2}") == R"(a.*b.+c.{2,}d(?:(?:\[[^ \n]*\])?.){2})");
  // One byte of anything, a newline too: nothing keeps it inside a line.
  CHECK_FALSE(RelaxForRawLines(R"(a\Cb)"));
}

// Vectorscan 5.4.9 (Debian 12), block mode, found no match of this pattern
// in this text (nor in user-loose's gen corpus, 600 of 19,948 lines), where
// RE2 and PCRE find one on the last line: the reason the search is RE2's.
TEST_CASE("the text Vectorscan missed a match in: its last line is named") {
  const std::string text =
      "26-11-22T07:05:11.383177334Z\" level=info msg=\"shim disconnected\" "
      "id=95f3a7127c0b3869 namespace=k8s.io\n2026-11-22T07:04:38.79992678Z stderr F "
      "timeout(ms)=600000 for collectives; watchdog enabled\nmlx5_core 0000:3b:00.05_cmd_out_err";
  const std::vector<std::string_view> patterns = {
      R"(\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\b.*\b(?:dn|off|err)\b)"};
  auto search = UnfilteredSearch::Build(patterns);
  REQUIRE(search);
  std::vector<std::size_t> starts;
  search->Lines(text, starts);
  CHECK(starts == std::vector<std::size_t>{text.rfind('\n') + 1});
}

// Checks that `search` names every line of `corpus` whose message one of
// `patterns` matches, as line starts, ascending, each once; returns how
// many lines it named and how many hold a match.
std::pair<std::size_t, std::size_t> CheckNamesEveryMatch(const UnfilteredSearch& search,
                                                         std::span<const std::string_view> patterns,
                                                         const std::string& corpus) {
  std::vector<std::size_t> starts;
  search.Lines(corpus, starts);
  CHECK(std::is_sorted(starts.begin(), starts.end()));
  CHECK(std::adjacent_find(starts.begin(), starts.end()) == starts.end());
  const std::set<std::size_t> marked(starts.begin(), starts.end());
  std::vector<std::unique_ptr<RE2>> res;
  res.reserve(patterns.size());
  for (std::string_view p : patterns) res.push_back(std::make_unique<RE2>(p));
  std::size_t lines_with_match = 0;
  for (std::size_t start = 0; start < corpus.size();) {
    const std::size_t nl = corpus.find('\n', start);
    const std::string text = ParseInputLine(corpus.substr(start, nl - start)).text;
    for (const auto& re : res) {
      if (RE2::PartialMatch(text, *re)) {
        ++lines_with_match;
        INFO("line: " << corpus.substr(start, nl - start) << " pattern: " << re->pattern());
        CHECK(marked.count(start) == 1);
        break;
      }
    }
    start = nl + 1;
  }
  return {marked.size(), lines_with_match};
}

// A journal-short tag's "[pid]" was cut from the message whatever it held
// (SplitTag); the relaxed pattern's "[pid]" did not match bytes that are
// not UTF-8 ([^ \n] in RE2's UTF-8 mode), so a forged or corrupted tag hid
// the line from the search: scan lost the fault (unfiltered_search_fuzz).
TEST_CASE("a journal tag whose pid holds bytes that are not UTF-8: no line is lost") {
  const std::vector<std::string_view> patterns = {R"(^\w+:\s+E\d)"};
  for (const std::string& pid : {std::string("2\xff\xfe"
                                             "211"),
                                 std::string("\xc3"), std::string("12")}) {
    const std::string corpus = "kernel: noise line\nNov 22 07:02:53 gpu-17 kubelet[" + pid +
                               "]: E1061 03:02:07.974218 sync failed\n";
    // Such a tag is no journal tag: the line stays whole (its "kubelet[").
    const bool ascii = pid == "12";
    CHECK(ParseInputLine(corpus.substr(corpus.find('\n') + 1)).text.starts_with("kubelet:") ==
          ascii);
    for (const std::string_view sample : {std::string_view(), std::string_view(corpus)}) {
      auto search = UnfilteredSearch::Build(patterns, sample);
      REQUIRE(search);
      INFO("pid bytes: " << pid.size());
      const auto [named, lines_with_match] = CheckNamesEveryMatch(*search, patterns, corpus);
      CHECK(lines_with_match == (ascii ? 1u : 0u));
    }
  }
}

TEST_CASE("UnfilteredSearch names every line whose message a pattern matches") {
  const std::string corpus = Corpus(7, 4000);
  for (const auto* patterns : {&kAsciiPatterns, &kOtherPatterns}) {
    const std::vector<std::string_view> views(patterns->begin(), patterns->end());
    auto search = UnfilteredSearch::Build(views);
    REQUIRE(search);
    const auto [named, lines_with_match] = CheckNamesEveryMatch(*search, views, corpus);
    CHECK(lines_with_match > 1000);
    CHECK(named < 4000);  // it does filter
  }
}

// The patterns above that hold a required byte pair (byte_pairs.h): a
// search of only these runs its regex on the lines holding a pair.
std::vector<std::string> WithBytePairs() {
  std::vector<std::string> out;
  for (const auto* patterns : {&kAsciiPatterns, &kOtherPatterns}) {
    for (const std::string& p : *patterns) {
      if (RequiredBytePairs(p)) out.push_back(p);
    }
  }
  return out;
}

TEST_CASE("a search by byte pairs names every line whose message a pattern matches") {
  const std::vector<std::string> paired = WithBytePairs();
  CHECK(paired.size() >= 15);
  const std::string corpus = Corpus(7, 4000);
  // Each pattern alone (its own pairs), then all of them in one search.
  std::vector<std::vector<std::string>> searches;
  searches.reserve(paired.size() + 1);
  for (const std::string& p : paired) searches.push_back({p});
  searches.push_back(paired);
  for (const std::vector<std::string>& patterns : searches) {
    const std::vector<std::string_view> views(patterns.begin(), patterns.end());
    auto search = UnfilteredSearch::Build(views);
    REQUIRE(search);
    CHECK(search->by_byte_pairs());
    CheckNamesEveryMatch(*search, views, corpus);
  }
  // And through a scan, over many chunks, as `faultline scan` runs it.
  const std::string big = Corpus(13, 40000);
  Loaded l = LoadPack(PackOf(paired));
  REQUIRE(l.set);
  RuleSetTesting::SearchUnfilteredFrom(*l.set, 0);
  CHECK(RuleSetTesting::UnfilteredSearchByBytePairs(*l.set, Origin::kAny));
  CHECK(CheckScan(paired, big).size() > 10000);
  CheckScan(paired, big + "Nov 22 07:02:53 gpu-17 t[1]: hw 12 up");
}

// The lines of `chunk` that the search's combined pattern matches, each
// line searched by itself: what Lines() must name, exactly.
std::vector<std::size_t> LinesMatchedAlone(const UnfilteredSearch& search, std::string_view chunk) {
  RE2::Options options;
  options.set_never_nl(true);
  const RE2 re(search.pattern(), options);
  std::vector<std::size_t> out;
  for (std::size_t start = 0; start < chunk.size();) {
    std::size_t end = chunk.find('\n', start);
    if (end == std::string_view::npos) end = chunk.size();
    if (RE2::PartialMatch(re2::StringPiece(chunk.data() + start, end - start), re)) {
      out.push_back(start);
    }
    start = end + 1;
  }
  return out;
}

TEST_CASE("marked lines searched in batches: each line named as if searched alone") {
  // One pattern, whose pairs ('E' then a digit, or two digits) the lines
  // below hold only where written ("E12"), so that the batch's end falls
  // where the test puts it.
  const std::vector<std::string_view> patterns = {R"(\bE\d{4}\b)"};
  auto search = UnfilteredSearch::Build(patterns);
  REQUIRE(search);
  REQUIRE(search->by_byte_pairs());
  const std::size_t batch = UnfilteredSearch::kBatchBytes;
  // Nearly a batch of lines the pairs mark and the pattern does not
  // match, between lines they do not mark.
  std::string filler;
  std::size_t marked_bytes = 0;  // what the batch holds of the filler
  while (marked_bytes + 400 < batch) {
    const std::string line = "gpu kernel: E12 retry " + std::string(marked_bytes % 37, 'x') + "\n";
    filler += line;
    marked_bytes += line.size();
    if (marked_bytes % 5 == 0) filler += "gpu kernel: nothing here\n";
  }
  // What follows, each shifted across the batch's end one byte at a time.
  const std::vector<std::string> tails = {
      "kernel: on the line that fills the batch, at its end: E1234\nE12 after\n",
      "E12 a line longer than a batch " + std::string(batch + 100, 'y') + " E4321\nE12\n",
      "E12\n\n\nE5555\n\n",                            // empty lines around a match
      "E12\r\nport E1212\r\nE12\r\n",                  // CRLF
      "sshd[12]:\r\nE12\n{\"MESSAGE\":\"x\"}\nE12\n",  // lines named without a pair
      "E12\nno newline at the end E9999",              // the chunk's last line
      "E12\nno newline, no match E12",
  };
  std::size_t named = 0;
  for (const std::string& tail : tails) {
    for (std::size_t shift = 0; shift < 300; ++shift) {
      std::string chunk = filler;
      chunk.append("E12 ").append(shift, 'z').append("\n").append(tail);
      std::vector<std::size_t> starts;
      search->Lines(chunk, starts);
      INFO("tail: " << tail.substr(0, 60) << " shift: " << shift);
      REQUIRE(starts == LinesMatchedAlone(*search, chunk));
      named += starts.size();
    }
  }
  CHECK(named >= 300 * 6);  // every tail but the last has a line named
}

TEST_CASE("byte pairs that mark more than half the sample's lines are not used") {
  const std::vector<std::string_view> patterns = {R"(\bE\d{4}\b)"};
  // Ten lines, `marked` of them holding 'E' and four digits.
  auto sample = [](int marked) {
    std::string out;
    for (int i = 0; i < 10; ++i) out += i < marked ? "x E1234 y\n" : "x y\n";
    return out;
  };
  for (int marked : {0, 4, 5}) {
    INFO(marked);
    auto search = UnfilteredSearch::Build(patterns, sample(marked));
    REQUIRE(search);
    CHECK(search->by_byte_pairs());
  }
  for (int marked : {6, 10}) {
    INFO(marked);
    auto search = UnfilteredSearch::Build(patterns, sample(marked));
    REQUIRE(search);
    CHECK_FALSE(search->by_byte_pairs());
  }
}

TEST_CASE("a pattern that matches the empty string has no search: every line, as before") {
  for (std::string_view p : {"x*", "^$", R"(\b)", "(?:hw)?"}) {
    CHECK(UnfilteredSearch::Build(std::vector<std::string_view>{p}) == nullptr);
  }
  Loaded l = LoadPack(PackOf({"x*", R"(\bhw\b)"}));
  REQUIRE(l.set);
  CHECK(RuleSetTesting::UnfilteredSearchPattern(*l.set, Origin::kAny).empty());
  const std::string corpus = Corpus(3, 500);
  RuleSetTesting::SearchUnfilteredFrom(*l.set, 0);
  CHECK(Scanned(*l.set, corpus) == Expected({"x*", R"(\bhw\b)"}, corpus));
}

TEST_CASE("a scan with unfiltered rules finds what plain RE2 finds on every message") {
  std::vector<std::string> all = kAsciiPatterns;
  SUBCASE("ASCII patterns") {}
  SUBCASE("with patterns that are not ASCII") {
    all.insert(all.end(), kOtherPatterns.begin(), kOtherPatterns.end());
  }
  // Many chunks (a chunk is 256 KiB).
  const std::string corpus = Corpus(11, 40000);
  REQUIRE(corpus.size() > (std::size_t{1} << 20));
  const Hits want = CheckScan(all, corpus);
  CHECK(want.size() > 20000);
  // No newline at the end, and a match on the last line.
  CheckScan(all, corpus + "Nov 22 07:02:53 gpu-17 t[1]: hw 12 up");
  // A line longer than a chunk, with matches at both ends.
  CheckScan(all, "hw 12 up " + std::string(300 << 10, 'q') + " 0000:3a:00.0 x dn\n" + corpus);
  // The buffer is one line.
  CheckScan(all, "[ 1.0] ab");
}

TEST_CASE("when no rule has a literal the search alone names the lines") {
  // `[A-Z]\d`, not `E\d`: " E0" ... " E9" would be a spelt-out literal set.
  const std::vector<std::string> loose = {R"((?i)\b(?:hw|sw|fw)\s+\d{2,3}\s+(?:up|dn)\b)",
                                          R"(^[a-z]+: [A-Z]\d)", R"(t: $)"};
  Loaded l = LoadPack(PackOf(loose, false));
  REQUIRE(l.set);
  CHECK_FALSE(l.set->prefilter_active());
  RuleSetTesting::SearchUnfilteredFrom(*l.set, 0);
  CHECK_FALSE(RuleSetTesting::UnfilteredSearchPattern(*l.set, Origin::kAny).empty());
  const std::string corpus = Corpus(5, 20000);
  std::vector<std::unique_ptr<RE2>> res;
  Hits want;
  std::uint64_t n = 0;
  for (std::size_t start = 0; start < corpus.size();) {
    const std::size_t nl = corpus.find('\n', start);
    const InputLine in = ParseInputLine(corpus.substr(start, nl - start));
    ++n;
    for (std::size_t r = 0; r < loose.size(); ++r) {
      if (RE2::PartialMatch(in.text, RE2(loose[r]))) want.emplace(n, "r" + std::to_string(r));
    }
    start = nl + 1;
  }
  CHECK(want.size() > 1000);
  CHECK(Scanned(*l.set, corpus) == want);
  // And it does filter: far fewer lines are visited than the corpus holds.
  std::uint64_t visited = 0;
  l.set->ForEachCandidateLine(corpus, Origin::kAny,
                              [&](std::string_view, std::uint64_t) { ++visited; });
  CHECK(visited < 20000 / 2);
}

TEST_CASE("unfiltered rules on real node logs: the same lines as plain RE2") {
  // The public loghub samples (bench/corpora/loghub) and the test tree's
  // real lines, each line in turn bare, as dmesg and as a journal record.
  std::string corpus;
  for (const char* name : {"BGL_2k.log", "HPC_2k.log", "Linux_2k.log", "Thunderbird_2k.log"}) {
    std::ifstream f(std::string(FL_SOURCE_DIR) + "/bench/corpora/loghub/" + name);
    REQUIRE(f);
    std::string line;
    int i = 0;
    while (std::getline(f, line)) {
      switch (i++ % 3) {
        case 0:
          corpus += line + "\n";
          break;
        case 1:
          corpus += "[ 12.5] " + line + "\n";
          break;
        default:
          corpus += "Nov 22 07:02:53 gpu-17 app[9]: " + line + "\n";
          break;
      }
    }
  }
  const std::vector<std::string> loose = {
      R"((?i)\b(?:hw|sw|fw)\b.*\b\d{3}\b)",
      R"(^\S+ \d+ [A-Z]{3,}:)",
      R"(\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\b.*(?:down|fail))",
      R"(^[a-z]+: \S+)",
      R"((?i)\bnode-\d{2}\b)",
      R"(\b\d{1,3}(?:\.\d{1,3}){3}\b.*\bup\b)",
      R"(^- \d+)",
      R"(\w+\[\d+\]: \w)",
  };
  const Hits want = CheckScan(loose, corpus);
  CHECK(want.size() > 1000);
}

TEST_CASE(
    "a line with several rules without a literal: the Set's matches are each rule's, in order") {
  // MatchCandidates runs the origin's Set once for two or more candidate
  // rules without a literal (most of them fail the line that one search
  // found for all); its matches must be those the rules give one by one:
  // the same rules, in load order, with the same fields.
  Loaded l = LoadPack(R"(pack: x
version: 1
rules:
  - id: code
    sources: [kernel]
    pattern: '\b(?P<code>\d{3})\b'
    summary: '{code}'
  - id: lit
    sources: [kernel]
    pattern: 'link (?P<state>down|up)'
    summary: '{state}'
  - id: port
    sources: [kernel]
    pattern: '(?i)\bp(?:ort)?\s?(?P<port>\d{1,2})\s+(?P<dir>up|dn)\b'
    summary: '{port} {dir}'
  - id: first-word
    sources: [kernel]
    pattern: '^(?P<word>[a-z]+): \S'
    summary: '{word}'
)");
  REQUIRE_MESSAGE(l.set, l.diags.ToJson().dump(1));
  const std::vector<std::uint32_t> all = {0, 1, 2, 3};
  std::size_t through_set = 0;
  for (const std::string line :
       {"eth: Port 4 DN after 118 errors, link down", "mlx: p17 up 404", "x: 12 p1 dn",
        "nothing here", "eth: link up", "HW 118 dn", "a: port 7  UP", "ab: 1234 p 9 up"}) {
    std::vector<RuleMatch> together;
    l.set->MatchCandidates(line, Origin::kKernel, all, together);
    std::vector<RuleMatch> alone;
    for (std::uint32_t r : all) {
      l.set->MatchCandidates(line, Origin::kKernel, std::span<const std::uint32_t>(&r, 1), alone);
    }
    REQUIRE(together.size() == alone.size());
    for (std::size_t i = 0; i < alone.size(); ++i) {
      CHECK(together[i].rule == alone[i].rule);
      CHECK(together[i].fields == alone[i].fields);
      CHECK(together[i].summary == alone[i].summary);
    }
    through_set += together.size() > 1 ? 1 : 0;
  }
  CHECK(through_set >= 4);  // lines where several of them match
}

}  // namespace
}  // namespace faultline
