// SPDX-License-Identifier: Apache-2.0
// The literal prefilter: what it extracts, and that it never changes results.
#include <algorithm>
#include <fstream>
#include <optional>
#include <random>
#include <set>

#include <doctest/doctest.h>
#include <re2/re2.h>

#include "matcher/input_line.h"
#include "matcher/literal_prefilter.h"
#include "matcher/literal_snapshot.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

std::vector<std::string> Texts(std::string_view pattern, bool case_classes = false) {
  std::vector<std::string> out;
  for (const RequiredLiteral& l : ExtractRequiredLiterals(pattern, case_classes)) {
    out.push_back(l.caseless ? "(?i)" + l.text : l.text);
  }
  return out;
}

using Strings = std::vector<std::string>;

// Every match of a ScanBuffer of `corpus` as "LINE_NUMBER RULE k=v;... LINE",
// in scan order: two scans are equal when they found the same.
Strings ScanMatches(const RuleSet& set, std::string_view corpus, Origin origin) {
  Strings out;
  set.ScanBuffer(
      corpus, origin, [&](std::string_view line, std::uint64_t n, std::vector<RuleMatch>& matches) {
        for (const RuleMatch& m : matches) {
          std::string f;
          for (const auto& [k, v] : m.fields) f.append(k).append("=").append(v).append(";");
          out.push_back(std::to_string(n) + " " + m.rule->id + " " + f + " " + std::string(line));
        }
      });
  return out;
}

TEST_CASE("a required literal is taken from the mandatory parts of a pattern only") {
  CHECK(Texts(R"(NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+))") == Strings{" Xid ("});
  CHECK(Texts(R"(mlx5_core (?P<pci>\S+): Port module event(?:\[error\])?)") ==
        Strings{" Port module event"});
  // A word's variants spelt out: rarer than "link " (common noise: "link
  // becomes ready") or "down" alone.
  CHECK(Texts(R"((?i)link (?:is )?down)") == Strings{"(?i)link down", "(?i)link is down"});
  CHECK(Texts(R"(NCCL (WARN|ERROR))") == Strings{"NCCL ERROR", "NCCL WARN"});
  CHECK(Texts(R"((?i)cuda (?:runtime )?error[: ]+(?P<what>[a-z ]+))") ==
        Strings{"(?i)cuda error", "(?i)cuda runtime error"});
  // A literal rare enough already is kept rather than spelt out: every
  // string is one more for Vectorscan to search.
  CHECK(Texts(R"(Port module event(?:\[error\])? x)") == Strings{"Port module event"});
  CHECK(Texts(R"(segfault at [0-9a-f]+ ip)") == Strings{"segfault at "});
  CHECK(Texts(R"((?:optional)?\d+)").empty());
  CHECK(Texts(R"(a|bc)").empty());                          // a branch too short
  CHECK(Texts(R"(GPU has fallen off|fell off the bus)") ==  // one per branch
        Strings{"GPU has fallen off", "fell off the bus"});
  CHECK(Texts(R"(\Qa.b*c\E)") == Strings{"a.b*c"});
  CHECK(Texts(R"(x*abc+d)").empty());  // "ab" is too short to select lines
}

// RE2 keeps a "(?i)" in force to the end of its group, across '|': the
// second branch matches "FALLEN OFF" too, so its literal must be caseless or
// the prefilter drops the line. (The extractor read each branch with the
// case it started with until it walked the one tree ParseRe2 reads.)
TEST_CASE("a (?i) holds across '|' for the rest of its group, as RE2 reads it") {
  const char* pattern = R"((?i)xid error|fallen off)";
  CHECK(RE2::PartialMatch("GPU has FALLEN OFF the bus", RE2(pattern)));
  CHECK(Texts(pattern) == Strings{"(?i)fallen off", "(?i)xid error"});
  CHECK(Texts(R"((?:(?i)xid error|fallen off) bus)") ==
        Strings{"(?i)fallen off bus", "(?i)xid error bus"});
}

// Users write a caseless letter as a class of its two cases, and a word's
// variants as an alternation after a short stem. Before, `[Xx][Ii][Dd]` and
// `(?i)nv(?:rm|link)` had no literal (W202): their regex ran on every line.
TEST_CASE(
    "a class of one letter's two cases is that letter, caseless, and a lone character is itself") {
  CHECK(Texts(R"([Xx]id (?P<code>\d+))", true) == Strings{"(?i)Xid "});
  CHECK(Texts(R"([Xx][Ii][Dd])", true) == Strings{"(?i)XID"});
  CHECK(Texts(R"([Ee]rr)", true) == Strings{"(?i)Err"});
  CHECK(Texts(R"(GPU[ ]lost)", true) == Strings{"GPU lost"});
  CHECK(Texts(R"((?i)[x]id)", true) == Strings{"(?i)xid"});
  // Not one letter's cases: no literal from the class.
  CHECK(Texts(R"([ab]cd)", true).empty());
  CHECK(Texts(R"([Xy]id)", true).empty());
  CHECK(Texts(R"([^Xx]id)", true).empty());
  CHECK(Texts(R"([Xx\d]id)", true).empty());
  // Only where the pattern has no literal otherwise: "own" of `[Dd]own`
  // stays case-sensitive (a caseless search costs more; subset-b +10%).
  CHECK(ExtractPatternLiterals(R"([Dd]own)").required ==
        std::vector<RequiredLiteral>{{"own", false}});
  CHECK(ExtractPatternLiterals(R"([Xx][Ii][Dd])").required ==
        std::vector<RequiredLiteral>{{"XID", true}});
}

TEST_CASE("a pattern without a plain literal searches for its choices spelt out") {
  const PatternLiterals lits = ExtractPatternLiterals(R"((?i)nv(?:rm|link) (?:error|fail))");
  std::vector<std::string> required;
  for (const RequiredLiteral& l : lits.required) {
    CHECK(l.caseless);
    required.push_back(l.text);
  }
  CHECK_FALSE(required.empty());
  // Three bytes are enough for a set searched instead of every line.
  std::vector<std::string> ecc;
  for (const RequiredLiteral& l : ExtractPatternLiterals(R"(\bE(?:CC|DAC)\b)").required) {
    ecc.push_back(l.text);
  }
  CHECK(ecc == std::vector<std::string>{"ECC", "EDAC"});
  for (const std::string& text : required) {
    CHECK_MESSAGE(
        (text.find("nvrm") != std::string::npos || text.find("nvlink") != std::string::npos ||
         text.find("error") != std::string::npos || text.find("fail") != std::string::npos),
        text);
  }
}

TEST_CASE("rules found through case classes and spelt-out choices match as without a prefilter") {
  const char* pack = R"(pack: users
version: 1
defaults: {sources: [kernel], category: hardware, severity: warning, action: event}
rules:
  - id: case-class
    pattern: '[Xx][Ii][Dd][: ]+(?P<code>\d+)'
  - id: stem
    pattern: '(?i)nv(?:rm|link)\b.*\b(?:fail|error)'
  - id: class-word
    pattern: '\b[Ee]rr\b'
  - id: short-choices
    pattern: '\bE(?:CC|DAC)\b'
)";
  const auto [with, without] = LoadWithAndWithoutPrefilter(pack);
  CHECK_FALSE(with.Has("W202"));
  std::string corpus;
  for (const char* line : {"NVRM: Xid (PCI:0000:3b:00): 79",
                           "nvrm: XID 13",
                           "xId: 5",
                           "xi d: 5",
                           "NVLink fatal error on link 3",
                           "nvlink: training FAILED",
                           "NvRm ok",
                           "nvswitch error",
                           "ERR",
                           "err: x",
                           "Err",
                           "error",
                           "e rr",
                           "kernel: NVRM: Xid: 31",
                           "nothing here",
                           "EDAC MC0: 1 CE",
                           "ECC",
                           "eccentric",
                           "EC C",
                           "ECCO"}) {
    for (int i = 0; i < 200; ++i) corpus.append(line).append("\n");
  }
  const Strings a = ScanMatches(*with.set, corpus, Origin::kKernel);
  const Strings b = ScanMatches(*without.set, corpus, Origin::kKernel);
  CHECK(a.size() == 200 * 9);
  CHECK(a == b);
}

TEST_CASE("literals never cross a colon, so IDENT[pid]: rewrites keep them valid") {
  for (const std::string& lit :
       Texts(R"(nv-fabricmanager: fatal error detected on (?P<gpu>\S+))")) {
    CHECK(lit.find(':') == std::string::npos);
  }
}

TEST_CASE("repeats and optional groups do not yield a literal they do not require") {
  for (const char* p : {"(?:abcdef)?xyz", "(?:abcdef)*", "abcdef{0,3}"}) {
    for (const std::string& lit : Texts(p)) {
      CHECK_MESSAGE(lit.find("abcdef") == std::string::npos, p);
    }
  }
}

const char* const kPack = R"(pack: mixed
version: 1
rules:
  - id: xid
    sources: [kernel]
    pattern: 'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)'
  - id: nccl
    sources: [pod]
    pattern: '(?i)NCCL WARN (?P<what>.*(?:timeout|error))'
  - id: link
    sources: [kernel, journal]
    pattern: 'mlx5_core (?P<pci>\S+): .*[Ll]ink (?:down|DOWN)'
  - id: loose
    sources: [journal]
    pattern: '^\w+ \d{5,}$'
  - id: alt
    sources: [kernel]
    pattern: 'fallen off the bus|fell off the bus'
)";

std::string Corpus() {
  std::mt19937 rng(42);
  const std::vector<std::string> lines = {
      "[ 12.3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1",
      "NVRM: Xid (0000:3b:00): 13, Graphics",
      "NVRM: xid (0000:3b:00): 13, lower case near miss",
      "train-0 NCCL WARN net timeout",
      "train-0 nccl warn Some ERROR",
      "NCCL INFO all good",
      "mlx5_core 0000:5e:00.0: Port 1 link down",
      "mlx5_core 0000:5e:00.0: Port 1 Link DOWN",
      "mlx5_core 0000:5e:00.0: link up",
      "abc 123456",
      "abc 1234",
      "GPU has fallen off the bus",
      "it fell off the bus again",
      "",
      "systemd[1]: Started Session 4 of user root.",
      "kubelet[901]: I1122 SyncLoop (PLEG)",
      "\xff\xfe binary junk NVRM: Xid (1): 2",
  };
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += lines[rng() % lines.size()];
    text += (i % 97 == 0) ? "\r\n" : "\n";
  }
  text += "mlx5_core x: link down";  // a last line without a newline
  return text;
}

TEST_CASE("ScanBuffer gives identical results with the prefilter on and off, for every origin") {
  CompileOptions off;
  off.use_prefilter = false;
  Loaded with = LoadPack(kPack);
  Loaded without = LoadPack(kPack, off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  CHECK(with.set->prefilter_active());
  CHECK_FALSE(without.set->prefilter_active());
  CHECK(with.Has("W202"));  // `loose` has no literal
  const std::string corpus = Corpus();
  for (Origin origin :
       {Origin::kKernel, Origin::kJournal, Origin::kPod, Origin::kIbCounters, Origin::kAny}) {
    auto collect = [&](const RuleSet& set) { return ScanMatches(set, corpus, origin); };
    auto a = collect(*with.set);
    auto b = collect(*without.set);
    // And both equal Match() line by line.
    std::vector<std::string> c;
    std::uint64_t n = 0;
    std::size_t start = 0;
    while (start <= corpus.size()) {
      std::size_t nl = corpus.find('\n', start);
      std::string_view line(corpus.data() + start,
                            (nl == std::string::npos ? corpus.size() : nl) - start);
      ++n;
      for (const RuleMatch& m : MatchLine(*without.set, line, origin)) {
        std::string f;
        for (const auto& [k, v] : m.fields) f.append(k).append("=").append(v).append(";");
        c.push_back(std::to_string(n) + " " + m.rule->id + " " + f + " " + std::string(line));
      }
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    if (origin != Origin::kIbCounters) CHECK(a.size() > 0);
    CHECK(a == b);
    CHECK(a == c);
  }
}

// What an agent's record matched, rendered for a CHECK.
std::vector<std::string> MatchRecords(const RuleSet& set, const std::vector<LogRecord>& records) {
  std::vector<std::string> out;
  std::vector<RuleMatch> matches;
  for (std::size_t i = 0; i < records.size(); ++i) {
    matches.clear();
    set.Match(records[i], matches);
    for (const RuleMatch& m : matches) {
      std::string f;
      for (const auto& [k, v] : m.fields) f.append(k).append("=").append(v).append(";");
      out.push_back(std::to_string(i) + " " + m.rule->id + " " + f);
    }
  }
  return out;
}

// Match(LogRecord), the agent's path, runs only the candidate rules of a
// one-line record (the literal prefilter) and the Set for a record of
// several lines or none; with the prefilter off, the Set for all. Before,
// it ran the Set on every record, whose DFA cache grew with every line read.
TEST_CASE(
    "Match(record), as the agent matches, gives identical results with the prefilter on "
    "and off, for every origin, one-line, multi-line and empty records") {
  CompileOptions off;
  off.use_prefilter = false;
  std::vector<std::pair<Loaded, Loaded>> sets;
  sets.emplace_back(LoadPack(kPack), LoadPack(kPack, off));
  // And the built-in packs, on the real lines of tests/data/real-lines.
  auto builtin = [](const CompileOptions& options) {
    Loaded l;
    l.set = LoadRules(RuleSources{}, options, l.diags, l.texts);
    return l;
  };
  sets.emplace_back(builtin({}), builtin(off));
  std::vector<std::string> lines;
  {
    const std::string corpus = Corpus();
    for (std::size_t start = 0; start < corpus.size();) {
      const std::size_t nl = std::min(corpus.find('\n', start), corpus.size());
      lines.push_back(corpus.substr(start, nl - start));
      start = nl + 1;
    }
  }
  for (const char* file : {"amd", "efa", "habana", "host", "nccl-pytorch", "network", "nvidia"}) {
    std::ifstream in(std::string(FL_SOURCE_DIR) + "/tests/data/real-lines/" + file + ".tsv");
    REQUIRE(in);
    for (std::string row; std::getline(in, row);) {
      if (row.empty() || row[0] == '#') continue;
      lines.push_back(row.substr(row.rfind('\t') + 1));  // the log line, its prefix included
    }
  }
  for (auto& [with, without] : sets) {
    REQUIRE(with.set);
    REQUIRE(without.set);
    for (Origin origin :
         {Origin::kKernel, Origin::kJournal, Origin::kPod, Origin::kIbCounters, Origin::kAny}) {
      std::vector<LogRecord> records;
      for (const std::string& line : lines) {
        LogRecord r;
        r.origin = origin;
        r.text = line;
        records.push_back(std::move(r));
      }
      for (std::size_t i = 0; i + 1 < lines.size(); i += 7) {  // several lines in one record
        LogRecord r;
        r.origin = origin;
        r.text = lines[i] + "\n" + lines[i + 1];
        records.push_back(std::move(r));
      }
      records.emplace_back().origin = origin;  // empty
      const std::vector<std::string> a = MatchRecords(*with.set, records);
      const std::vector<std::string> b = MatchRecords(*without.set, records);
      if (origin != Origin::kIbCounters) CHECK(a.size() > 0);
      CHECK(a == b);
    }
  }
}

// All the sets a pattern requires, chosen and confirm, as sorted strings.
std::vector<std::string> AllRequiredSets(std::string_view pattern) {
  std::vector<std::string> out;
  auto render = [](const std::vector<RequiredLiteral>& set) {
    std::string r;
    for (const RequiredLiteral& l : set) r += (l.caseless ? "(?i)" : "") + l.text + "|";
    return r;
  };
  out.push_back(render(ExtractRequiredLiterals(pattern)));
  for (const auto& set : ExtractConfirmLiteralSets(pattern)) out.push_back(render(set));
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("line numbers stay exact across scan chunks and past a line longer than a chunk") {
  CompileOptions off;
  off.use_prefilter = false;
  // Without `loose` (no literal, so every line would be walked and counted).
  std::string pack = kPack;
  const std::size_t at = pack.find("  - id: loose");
  pack.erase(at, pack.find("  - id: alt") - at);
  Loaded with = LoadPack(pack);
  Loaded without = LoadPack(pack, off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  CHECK_FALSE(with.Has("W202"));
  // About 2 MiB (the scan works in chunks of a few hundred KiB), with a
  // 600 KiB line holding a match at its end in the middle.
  std::string corpus = Corpus() + "\n" + Corpus() + "\n";
  corpus += std::string(600 << 10, 'x') + " GPU has fallen off the bus\n";
  while (corpus.size() < (2u << 20)) corpus += Corpus() + "\n";
  auto collect = [&](const RuleSet& set) {
    std::vector<std::string> out;
    set.ScanBuffer(corpus, Origin::kAny,
                   [&](std::string_view line, std::uint64_t n, std::vector<RuleMatch>& matches) {
                     for (const RuleMatch& m : matches) {
                       out.push_back(std::to_string(n) + " " + m.rule->id + " " +
                                     std::string(line.substr(0, 40)));
                     }
                   });
    return out;
  };
  auto a = collect(*with.set);
  CHECK(a.size() > 1000);
  CHECK(a == collect(*without.set));
}

TEST_CASE("confirm literal sets are the pattern's other mandatory literals, never optional ones") {
  CHECK(AllRequiredSets(R"(nvswitch(?P<n>\d+): SXid \((?P<pci>[^)]*)\): (?:Fatal|Non-fatal))") ==
        Strings{" Fatal| Non-fatal|", " SXid (|", "nvswitch|"});
  CHECK(AllRequiredSets(R"(foo_bar(?: baz_qux)? \d+ (?i)quux_zz)") ==
        Strings{"(?i) quux_zz|", "foo_bar|"});
  CHECK(ExtractConfirmLiteralSets("link down|port flap").empty());  // no second set
  CHECK(ExtractConfirmLiteralSets(R"(\w+ \d+)").empty());           // not even a first
}

TEST_CASE("one reading of a pattern gives the same required and confirm sets as two") {
  for (std::string_view pattern :
       {R"(nvswitch(?P<n>\d+): SXid \((?P<pci>[^)]*)\): (?:Fatal|Non-fatal))",
        R"(foo_bar(?: baz_qux)? \d+ (?i)quux_zz)", "link down|port flap", R"(\w+ \d+)",
        R"(NCCL (WARN|ERROR).*(?i)timeout)", "[Xx][Ii][Dd]", ""}) {
    CAPTURE(pattern);
    const RequiredAndConfirmLiterals both = ExtractRequiredAndConfirmLiterals(pattern);
    CHECK(both.required == ExtractRequiredLiterals(pattern));
    CHECK(both.confirm == ExtractConfirmLiteralSets(pattern));
  }
}

// Seven rules share one literal, so a line holding it has more candidates
// than MatchCandidates runs one by one (it then uses the origin's Set);
// `svc` matches the message of a journal line ("svc: ..."), which differs
// from the raw line (`svc[42]:`); `anchored` has no literal and is anchored
// at the start of the message, not of the raw line: it runs on every line.
constexpr const char* kManyPack = R"(pack: many
version: 1
rules:
  - {id: r1, sources: [kernel], pattern: 'GPU fault (?P<n>1\d*)'}
  - {id: r2, sources: [kernel], pattern: 'GPU fault (?P<n>2\d*)'}
  - {id: r3, sources: [journal], pattern: 'GPU fault (?P<n>3\d*)'}
  - {id: r4, sources: [kernel, journal], pattern: 'GPU fault (?P<n>4\d*)'}
  - {id: r5, sources: [pod], pattern: 'GPU fault (?P<n>5\d*)'}
  - {id: r6, sources: [kernel], pattern: 'GPU fault \d+ (?P<what>hot|cold)'}
  - {id: r7, sources: [kernel], pattern: 'GPU fault'}
  - {id: svc, sources: [journal], pattern: '^svc: (?P<msg>restart loop) detected'}
  - {id: anchored, sources: [journal, kernel], pattern: '^\w+: \d{5,}$'}
  - {id: xid, sources: [kernel], pattern: 'NVRM: Xid \((?P<pci>[^)]*)\): (?P<xid>\d+)'}
  - {id: peer, sources: [kernel], pattern: 'nvidia-peermem[^\n]*?(?:ERROR|Unknown symbol (?P<sym>\w+))'}
)";

std::string JournalCorpus() {
  std::mt19937 rng(7);
  const std::vector<std::string> lines = {
      "[ 12.3] GPU fault 17 hot",
      "[ 12.4] GPU fault 2",
      "Nov 22 07:02:53 gpu-17 kernel: GPU fault 4 cold",
      "Nov 22 07:02:53 gpu-17 app[1]: GPU fault 3",
      "Nov 22 07:02:53 gpu-17 app[1]: GPU fault 5",
      "Nov 22 07:02:53 gpu-17 svc[42]: restart loop detected",
      "Nov 22 07:02:53 gpu-17 svc[42]: restart loop",
      "Nov 22 07:02:53 gpu-17 svc[42]: 123456",
      "Nov 22 07:02:53 gpu-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1",
      "[ 13.0] NVRM: Xid (PCI:0000:3b:00): 13, GPU fault 1",
      "plain 123456",
      "plain GPU fault 44",
      "Nov 22 07:02:53 gpu-17 systemd[1]: Started Session 4 of user root.",
      "[ 14.0] nvidia-peermem: loading out-of-tree module taints kernel.",
      "[ 14.1] nvidia-peermem: ERROR detected",
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one line, split for width.
      "Nov 22 07:02:53 gpu-17 kernel: nvidia-peermem: Unknown symbol "
      "ib_register_peer_memory_client",
  };
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += lines[rng() % lines.size()];
    text += '\n';
  }
  return text;
}

TEST_CASE(
    "a line holding a rule's prefilter literal but not its confirm literals is no candidate") {
  Loaded l = LoadPack(R"(pack: peer
version: 1
rules:
  - {id: peer, sources: [kernel], pattern: 'nvidia-peermem[^\n]*?(?:ERROR|Unknown symbol (?P<sym>\w+))'}
)");
  REQUIRE(l.set);
  auto visited = [&](const std::string& text) {
    std::vector<std::string> out;
    l.set->ForEachCandidateLine(text, Origin::kKernel, [&](std::string_view line, std::uint64_t) {
      out.emplace_back(line);
    });
    return out;
  };
  const std::string near_miss = "[ 14.0] nvidia-peermem: loading out-of-tree module\n";
  const std::string fault = "[ 14.1] nvidia-peermem: ERROR detected\n";
  const std::string other = "[ 14.2] ERROR in some other module\n";
  CHECK(visited(near_miss + other + near_miss).empty());
  CHECK(visited(near_miss + fault + other) == Strings{fault.substr(0, fault.size() - 1)});
}

// The confirm search is skipped for a rule whose hits it has not been
// turning away (rule_scan.cc's ConfirmTally): never a change in what is
// found, and a run of near misses brings it back.
TEST_CASE("a rule's confirm search, skipped while it stops nothing, returns for near misses") {
  const std::string pack = R"(pack: peer
version: 1
rules:
  - {id: peer, sources: [kernel], pattern: 'nvidia-peermem[^\n]*?(?:ERROR|Unknown symbol (?P<sym>\w+))'}
)";
  Loaded with = LoadPack(pack);
  CompileOptions off;
  off.use_prefilter = false;
  Loaded without = LoadPack(pack, off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  const std::string fault = "[ 14.1] nvidia-peermem: ERROR detected";
  const std::string symbol = "[ 14.3] nvidia-peermem: Unknown symbol ib_register_peer";
  const std::string near_miss = "[ 14.0] nvidia-peermem: loading out-of-tree module";
  std::string text;
  for (int i = 0; i < 1000; ++i) text += (i % 2 ? fault : symbol) + "\n";  // every hit matches
  for (int i = 0; i < 1000; ++i) text += (i % 50 == 0 ? fault : near_miss) + "\n";
  std::size_t near_misses_visited = 0;
  with.set->ForEachCandidateLine(text, Origin::kKernel, [&](std::string_view line, std::uint64_t) {
    near_misses_visited += line == near_miss;
  });
  // 980 near misses: while the search is off, a few dozen reach RE2 before
  // the probes turn it back on; all of them would without it.
  CHECK(near_misses_visited > 0);
  CHECK(near_misses_visited < 100);
  CHECK(ScanMatches(*with.set, text, Origin::kKernel) ==
        ScanMatches(*without.set, text, Origin::kKernel));
  CHECK(ScanMatches(*with.set, text, Origin::kKernel).size() == 1020);
}

TEST_CASE("candidate rules on a parsed message give exactly Match()'s results, as scan uses them") {
  CompileOptions off;
  off.use_prefilter = false;
  std::string without_anchored = kManyPack;
  const std::size_t at = without_anchored.find("  - {id: anchored");
  without_anchored.erase(at, without_anchored.find('\n', at) + 1 - at);
  for (const std::string& pack : {std::string(kManyPack), without_anchored}) {
    for (bool prefilter : {true, false}) {
      const bool has_anchored = pack.find("id: anchored") != std::string::npos;
      Loaded l = LoadPack(pack, prefilter ? CompileOptions{} : off);
      REQUIRE(l.set);
      CHECK(l.set->prefilter_active() == prefilter);
      const std::string corpus = JournalCorpus();
      for (std::optional<Origin> forced :
           {std::optional<Origin>(), std::optional<Origin>(Origin::kKernel),
            std::optional<Origin>(Origin::kJournal), std::optional<Origin>(Origin::kAny)}) {
        auto render = [](std::uint64_t n, const std::vector<RuleMatch>& ms) {
          std::vector<std::string> out;
          for (const RuleMatch& m : ms) {
            std::string f;
            for (const auto& [k, v] : m.fields) f.append(k).append("=").append(v).append(";");
            out.push_back(std::to_string(n) + " " + m.rule->id + " " + f);
          }
          return out;
        };
        std::vector<std::string> got, want;
        std::size_t visited = 0;
        l.set->ForEachCandidate(
            corpus, forced.value_or(Origin::kAny),
            [&](std::string_view line, std::uint64_t n, std::span<const std::uint32_t> candidates) {
              ++visited;
              CHECK(std::is_sorted(candidates.begin(), candidates.end()));
              InputLine in = ParseInputLine(line);
              std::vector<RuleMatch> ms;
              l.set->MatchCandidates(in.text, forced.value_or(in.origin), candidates, ms);
              for (std::string& s : render(n, ms)) got.push_back(std::move(s));
            });
        std::uint64_t n = 0;
        std::size_t start = 0;
        while (start < corpus.size()) {
          std::size_t nl = corpus.find('\n', start);
          InputLine in = ParseInputLine(std::string_view(corpus).substr(start, nl - start));
          ++n;
          for (std::string& s : render(n, MatchLine(*l.set, in.text, forced.value_or(in.origin)))) {
            want.push_back(std::move(s));
          }
          start = nl + 1;
        }
        CHECK(want.size() > 100);
        CHECK(got == want);
        // The prefilter skips lines unless a rule without a literal runs on all.
        if (prefilter) CHECK((visited < n) != has_anchored);
      }
    }
  }
}

// ExtractAlternativeLiteralSets rendered: one "a|b|" string per set.
Strings Alternatives(std::string_view pattern) {
  return RenderLiteralSets(ExtractAlternativeLiteralSets(pattern));
}

const char* const kNcclError =
    R"(NCCL (?:(?P<kind>error|timeout) in: (?P<loc>[^\s,]+)|Error (?P<code>\d+): (?P<error>.+)))";

TEST_CASE("alternative literal sets: the chosen one first, then every other required set") {
  // Static choice: the first branch's words spelt out with " in";
  // alternatives join one set per branch, and the top-level "NCCL " is one
  // too.
  const Strings alts = Alternatives(kNcclError);
  REQUIRE(alts.size() == 4);
  CHECK(alts[0] == "Error |error in|timeout in|");
  CHECK(std::count(alts.begin(), alts.end(), " in|Error |") == 1);
  CHECK(std::count(alts.begin(), alts.end(), "Error |error|timeout|") == 1);
  CHECK(std::count(alts.begin(), alts.end(), "NCCL |") == 1);
  // Never an optional or repeated-from-zero literal; never across a colon.
  for (const char* p :
       {"(?:abcdef)?xyz1", "(?:abcdef)*xyz1", "xyz1(?:abcdef|ghijkl)?", "xyz1(?:abcdef)*|xyz1"}) {
    for (const std::string& set : Alternatives(p)) {
      CHECK_MESSAGE(set.find("abcdef") == std::string::npos, p);
      CHECK_MESSAGE(set.find("ghijkl") == std::string::npos, p);
    }
  }
  for (const std::string& set : Alternatives(R"(nv-fabricmanager: fatal (?:error|fault) on x)")) {
    CHECK(set.find(':') == std::string::npos);
  }
  CHECK(Alternatives(R"((?:optional)?\d+)").empty());  // no chosen set, no alternatives
}

TEST_CASE("a scan that samples its input picks rarer literals and finds exactly the same matches") {
  const std::string pack = std::string(R"(pack: sampled
version: 1
rules:
  - id: nccl-error
    sources: [pod]
    pattern: ')") + kNcclError +
                           R"('
  - id: xid
    sources: [kernel]
    pattern: 'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)'
)";
  CompileOptions off;
  off.use_prefilter = false;
  Loaded with = LoadPack(pack);
  Loaded without = LoadPack(pack, off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  // "Error " (of the static choice) is on most lines here; "NCCL " is
  // rare, and sometimes on lines that do not match.
  std::mt19937 rng(7);
  const std::vector<std::string> lines = {
      "kubelet: Error syncing pod, skipping",
      "dockerd: Error response from daemon",
      "sshd: Error reading from socket",
      "NCCL error in: net.cc:12, remote peer closed",
      "NCCL timeout in: proxy.cc:801",
      "NCCL Error 3: internal error",
      "NCCL INFO error counters reset in 3 s",
      "NCCL Error x: not a code",
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1 in use",
  };
  std::string corpus;
  for (int i = 0; i < 40000; ++i) {
    const std::size_t k = rng() % 100;
    corpus += lines[k < 90 ? k % 3 : 3 + k % 6];
    corpus += '\n';
  }
  auto collect = [&](const RuleSet& set) { return ScanMatches(set, corpus, Origin::kAny); };
  const Strings unsampled = collect(*with.set);  // below the default sample size
  CHECK(RuleSetTesting::SampledSwitches(*with.set) == 0);
  RuleSetTesting::SampleBuffersFrom(*with.set, 0);
  const Strings sampled = collect(*with.set);
  CHECK(RuleSetTesting::SampledSwitches(*with.set) == 1);  // nccl-error only
  const Strings reference = collect(*without.set);
  CHECK(reference.size() > 1000);
  CHECK(sampled == reference);
  CHECK(unsampled == reference);
  // Per origin too (the plan keeps each literal's origins).
  for (Origin origin : {Origin::kKernel, Origin::kPod, Origin::kJournal}) {
    std::size_t a = 0, b = 0;
    with.set->ScanBuffer(
        corpus, origin,
        [&](std::string_view, std::uint64_t, std::vector<RuleMatch>& m) { a += m.size(); });
    without.set->ScanBuffer(
        corpus, origin,
        [&](std::string_view, std::uint64_t, std::vector<RuleMatch>& m) { b += m.size(); });
    CHECK(a == b);
  }
}

TEST_CASE("a database of many long literals reports its own literals only, on any bytes") {
  // 60 literals of 5 bytes or more: Vectorscan's FDR would step 4 bytes at
  // a time, so Build adds a literal of its own, which no hit may name.
  std::mt19937 rng(5);
  const std::string alphabet = "ab\xfe\xff";
  std::vector<RequiredLiteral> literals;
  std::set<std::string> seen;
  while (literals.size() < 60) {
    std::string t;
    for (std::size_t k = 0, len = 5 + rng() % 4; k < len; ++k) t += alphabet[rng() % 2];
    if (seen.insert(t).second) literals.push_back({t, false});
  }
  std::string text;
  for (int i = 0; i < 20000; ++i) text += alphabet[rng() % alphabet.size()];
  auto built = LiteralPrefilter::Build(literals);
  REQUIRE(built.ok());
  std::vector<std::pair<unsigned, std::uint64_t>> hits, expected;
  auto on_hit = [](void* context, unsigned id, std::uint64_t end) {
    static_cast<std::vector<std::pair<unsigned, std::uint64_t>>*>(context)->emplace_back(id, end);
  };
  REQUIRE((*built)->Scan(text, on_hit, &hits).ok());
  for (unsigned id = 0; id < literals.size(); ++id) {
    const std::string& t = literals[id].text;
    for (std::size_t at = text.find(t); at != std::string::npos; at = text.find(t, at + 1)) {
      expected.emplace_back(id, at + t.size());
    }
  }
  std::sort(hits.begin(), hits.end());
  std::sort(expected.begin(), expected.end());
  CHECK(expected.size() > 100);
  CHECK(hits == expected);
}

TEST_CASE(
    "a sampled scan of the built-in rules finds exactly what a scan without prefilter finds") {
  // Every built-in rule's match and near-miss tests and the real lines,
  // among lines that make the static choices' literals common (" in",
  // "Link ", "amdgpu ", "ring "), so that sampling picks other sets, the
  // expanded ones among them, and cuts literals.
  CompileOptions off;
  off.use_prefilter = false;
  auto builtin = [](const CompileOptions& options) {
    Loaded l;
    l.set = LoadRules(RuleSources{}, options, l.diags, l.texts);
    return l;
  };
  Loaded with = builtin({});
  Loaded without = builtin(off);
  REQUIRE(with.set);
  REQUIRE(without.set);
  std::vector<std::string> lines = {
      "NCCL INFO comm 0x55 rank 3 nranks 8 cudaDev 3 - Init COMPLETE in 5 ms",
      "nv-fabricmanager[9]: configured NVSwitches to route GPU NVLink traffic.",
      "amdgpu 0000:4a:00.0: amdgpu: no uncorrectable hardware errors detected in umc block",
      "mce: CPU2: Thermal monitoring enabled (TM1)",
      "systemd-networkd[1021]: veth6160251: Lost carrier",
      "kernel: I/O error, dev loop2, sector 0 op 0x0:(READ) flags 0x0",
  };
  const std::size_t noise = lines.size();
  for (const Rule& rule : with.set->rules()) {
    for (const RuleTest& t : rule.match_tests) lines.push_back(t.line);
    for (const RuleTest& t : rule.no_match_tests) lines.push_back(t.line);
  }
  for (const char* file : {"amd", "efa", "habana", "host", "nccl-pytorch", "network", "nvidia"}) {
    std::ifstream in(std::string(FL_SOURCE_DIR) + "/tests/data/real-lines/" + file + ".tsv");
    REQUIRE(in);
    for (std::string row; std::getline(in, row);) {
      if (!row.empty() && row[0] != '#') lines.push_back(row.substr(row.rfind('\t') + 1));
    }
  }
  std::mt19937 rng(9);
  std::string corpus;
  for (int i = 0; i < 60000; ++i) {
    const std::size_t k = rng() % 4 == 0 ? noise + rng() % (lines.size() - noise) : rng() % noise;
    corpus += lines[k] + "\n";
  }
  RuleSetTesting::SampleBuffersFrom(*with.set, 0);
  for (Origin origin :
       {Origin::kKernel, Origin::kJournal, Origin::kPod, Origin::kIbCounters, Origin::kAny}) {
    auto collect = [&](const RuleSet& set) { return ScanMatches(set, corpus, origin); };
    const Strings a = collect(*with.set);
    if (origin != Origin::kIbCounters) CHECK(a.size() > 500);
    CHECK(a == collect(*without.set));
  }
  // nccl.backend-error, net.netdev-link-up and -down, amd.ring-* at least.
  CHECK(RuleSetTesting::SampledSwitches(*with.set) >= 5 * 5);
}

// A few rules at a time: few enough literals for Vectorscan's Teddy, where
// a sampled scan cuts each literal to end at its rarest 4 bytes
// (CutAtRarestEnds) instead of after its rarest 8. Every built-in rule is
// in one of the groups.
TEST_CASE("sampled scans of small rule sets find exactly what scans without prefilter find") {
  CompileOptions off;
  off.use_prefilter = false;
  Loaded builtin;
  builtin.set = LoadRules(RuleSources{}, {}, builtin.diags, builtin.texts);
  REQUIRE(builtin.set);
  std::vector<std::string> lines = {
      "NCCL INFO comm 0x55 rank 3 nranks 8 cudaDev 3 - Init COMPLETE in 5 ms",
      "nv-fabricmanager[9]: configured NVSwitches to route GPU NVLink traffic.",
      "systemd-networkd[1021]: veth6160251: Lost carrier",
      "kernel: I/O error, dev loop2, sector 0 op 0x0:(READ) flags 0x0",
  };
  const std::size_t noise = lines.size();
  std::vector<Rule> enabled;
  for (const Rule& rule : builtin.set->rules()) {
    if (rule.disabled) continue;
    enabled.push_back(rule);
    for (const RuleTest& t : rule.match_tests) lines.push_back(t.line);
    for (const RuleTest& t : rule.no_match_tests) lines.push_back(t.line);
  }
  std::mt19937 rng(13);
  std::string corpus;
  for (int i = 0; i < 20000; ++i) {
    const std::size_t k = rng() % 4 == 0 ? noise + rng() % (lines.size() - noise) : rng() % noise;
    corpus += lines[k] + "\n";
  }
  constexpr std::size_t kGroup = 12;
  std::size_t matched = 0;
  for (std::size_t first = 0; first < enabled.size(); first += kGroup) {
    const std::vector<Rule> group(
        enabled.begin() + static_cast<std::ptrdiff_t>(first),
        enabled.begin() + static_cast<std::ptrdiff_t>(std::min(first + kGroup, enabled.size())));
    Diagnostics d1, d2;
    auto with = RuleSet::Compile(group, {}, d1);
    auto without = RuleSet::Compile(group, off, d2);
    REQUIRE(with);
    REQUIRE(without);
    RuleSetTesting::SampleBuffersFrom(*with, 0);
    const Strings a = ScanMatches(*with, corpus, Origin::kAny);
    CHECK(a == ScanMatches(*without, corpus, Origin::kAny));
    matched += a.size();
  }
  CHECK(matched > 1000);
}

}  // namespace
}  // namespace faultline
