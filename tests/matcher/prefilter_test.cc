// SPDX-License-Identifier: Apache-2.0
// The literal prefilter: what it extracts, and that it never changes results.
#include <random>

#include <doctest/doctest.h>

#include "matcher/literal_prefilter.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

std::vector<std::string> Texts(std::string_view pattern) {
  std::vector<std::string> out;
  for (const RequiredLiteral& l : ExtractRequiredLiterals(pattern)) {
    out.push_back(l.caseless ? "(?i)" + l.text : l.text);
  }
  return out;
}

using Strings = std::vector<std::string>;

TEST_CASE("a required literal is taken from the mandatory parts of a pattern only") {
  CHECK(Texts(R"(NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+))") == Strings{" Xid ("});
  CHECK(Texts(R"(mlx5_core (?P<pci>\S+): Port module event(?:\[error\])?)") ==
        Strings{" Port module event"});
  // "link " occurs in common noise ("link becomes ready"); "down" is rarer.
  CHECK(Texts(R"((?i)link (?:is )?down)") == Strings{"(?i)down"});
  CHECK(Texts(R"(segfault at [0-9a-f]+ ip)") == Strings{"segfault at "});
  CHECK(Texts(R"((?:optional)?\d+)").empty());
  CHECK(Texts(R"(a|bc)").empty());                          // a branch too short
  CHECK(Texts(R"(GPU has fallen off|fell off the bus)") ==  // one per branch
        Strings{"GPU has fallen off", "fell off the bus"});
  CHECK(Texts(R"(\Qa.b*c\E)") == Strings{"a.b*c"});
  CHECK(Texts(R"(x*abc+d)").empty());  // "ab" is too short to select lines
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
    auto collect = [&](const RuleSet& set) {
      std::vector<std::string> out;
      set.ScanBuffer(corpus, origin,
                     [&](std::string_view line, std::uint64_t n, std::vector<RuleMatch>& matches) {
                       for (const RuleMatch& m : matches) {
                         std::string f;
                         for (const auto& [k, v] : m.fields) f += k + "=" + v + ";";
                         out.push_back(std::to_string(n) + " " + m.rule->id + " " + f + " " +
                                       std::string(line));
                       }
                     });
      return out;
    };
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
        for (const auto& [k, v] : m.fields) f += k + "=" + v + ";";
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

}  // namespace
}  // namespace faultline
