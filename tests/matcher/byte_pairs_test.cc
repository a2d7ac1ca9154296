// SPDX-License-Identifier: Apache-2.0
// The byte pairs every match of a literal-less pattern holds
// (matcher/byte_pairs.h): the unfiltered search runs RE2 only on the lines
// that hold one, so a pair a match can do without would lose a fault.
#include "matcher/byte_pairs.h"

#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <re2/re2.h>

namespace faultline {
namespace {

// "[ab][0-9]" for a pair: each side's bytes, runs as ranges, others in hex.
std::string Describe(const ByteSet& s) {
  std::string out = "[";
  for (int b = 0; b < 256; ++b) {
    if (!s[static_cast<std::size_t>(b)]) continue;
    int e = b;
    while (e < 255 && s[static_cast<std::size_t>(e) + 1]) ++e;
    auto one = [&](int c) {
      if (c > ' ' && c < 0x7f) {
        out += static_cast<char>(c);
      } else {
        static const char kHex[] = "0123456789abcdef";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      }
    };
    one(b);
    if (e > b + 1) out += '-';
    if (e > b) one(e);
    b = e;
  }
  return out + "]";
}

std::vector<std::string> Pairs(std::string_view pattern) {
  std::vector<std::string> out;
  const auto pairs = RequiredBytePairs(pattern);
  if (!pairs) return out;
  for (const BytePair& p : *pairs) out.push_back(Describe(p.first) + Describe(p.second));
  return out;
}

using Strings = std::vector<std::string>;

// The pairs with the bytes that must follow each.
std::vector<std::string> PairsThen(std::string_view pattern) {
  std::vector<std::string> out;
  const auto pairs = RequiredBytePairs(pattern);
  if (!pairs) return out;
  for (const BytePair& p : *pairs) {
    std::string text = Describe(p.first) + Describe(p.second);
    for (const ByteSet& b : p.then) text += Describe(b);
    out.push_back(text);
  }
  return out;
}

// Whether one of the pairs, with the bytes that must follow it, stands at
// line[j] (']' also before a ':').
bool PairAt(const std::vector<BytePair>& pairs, std::string_view line, std::size_t j) {
  const auto a = static_cast<unsigned char>(line[j]);
  const auto b = static_cast<unsigned char>(line[j + 1]);
  for (const BytePair& p : pairs) {
    if (!(p.first[a] || (a == ']' && p.second[':'])) || !p.second[b]) continue;
    if (j + 2 + p.then.size() > line.size()) continue;
    std::size_t k = 0;
    while (k < p.then.size() && p.then[k][static_cast<unsigned char>(line[j + 2 + k])]) ++k;
    if (k == p.then.size()) return true;
  }
  return false;
}

TEST_CASE("a pattern without a literal still requires two adjacent bytes") {
  CHECK(Pairs(R"(\bE\d{4}\b)") == Strings{"[E][0-9]"});
  // Each branch gives its own pair (the cheapest), the alternation their union.
  CHECK(Pairs(R"(\b(?:ERR|E)[[:digit:]]{3,4}\b)") == Strings{"[ER][0-9]"});
  CHECK(Pairs(R"(\b(?:dn|off|err)\b)") == Strings{"[d][n]", "[o][f]", "[e][r]"});
  // An optional part in between: its first bytes may follow as well.
  CHECK(Pairs(R"(Q:?\d)") == Strings{"[Q][0-:]"});  // 0-9 and ':'
  // Zero-width assertions leave the bytes around them adjacent.
  CHECK(Pairs(R"(Q\b\d)") == Strings{"[Q][0-9]"});
  // A repeat of two or more meets itself.
  CHECK(Pairs(R"([Qq]{2,})") == Strings{"[Qq][Qq]"});
  // A caseless letter is both cases; k and s also the last and first
  // bytes of U+212A KELVIN SIGN and U+017F LONG S, RE2's folds of them.
  CHECK(Pairs(R"((?i)hw)") == Strings{"[Hh][Ww]"});
  CHECK(Pairs(R"((?i)sk)") == Strings{"[Ss\\xbf][Kk\\xe2]"});
  CHECK(Pairs(R"(\x{e9}Q)") == Strings{"[\\xa9][Q]"});  // é: c3 a9
}

TEST_CASE("a pair takes the bytes every match holds right after it") {
  CHECK(PairsThen(R"(\bE\d{4}\b)") == Strings{"[E][0-9][0-9][0-9][0-9]"});
  CHECK(PairsThen(R"(\b(?:ERR|E)[[:digit:]]{3,4}\b)") == Strings{"[ER][0-9][0-9][0-9]"});
  CHECK(PairsThen(R"([Qq]{3,}x)") == Strings{"[Qq][Qq][Qq]"});
  // Branches of one length: each place the union; of two, the shorter.
  CHECK(PairsThen(R"(Q(?:ab|cd)\d)") == Strings{"[Q][ac][bd][0-9]"});
  CHECK(PairsThen(R"(Q(?:ab|c)\d)") == Strings{"[Q][ac]"});
  // Not past what may match nothing, a ':' (a journal "[pid]" may stand
  // before it in the raw line), or a character of more than one byte.
  CHECK(PairsThen(R"(Q\d?x)") == Strings{"[Q][0-9x]"});
  const auto colon = BytePairChoices(R"(Q\d:\d)");
  REQUIRE(colon.size() == 3);
  CHECK(Describe(colon[1][0].first) + Describe(colon[1][0].second) == "[Q][0-9]");
  CHECK(colon[1][0].then.empty());
  // After the ':' itself the raw line holds what the message does.
  CHECK(colon[0][0].then.size() == 1);
  CHECK(PairsThen(R"((?i)Qk\d)") == Strings{"[Qq][Kk\\xe2]"});
  CHECK(PairsThen(R"(Q\bx\b\d)") == Strings{"[Q][x][0-9]"});
}

TEST_CASE("no pair where a match need not hold one, or where any byte may stand") {
  for (std::string_view p : {R"(E)", R"(E?\d)", R"(E|\d\d)", R"(E.\d)", R"([^x]\d)", R"(\pL\d)",
                             R"(\w\w)", R"(Q*E)", R"(é\d)", R"((?i)é\d)", R"(E[[:^alpha:]])"}) {
    INFO(p);
    CHECK(Pairs(p).empty());
  }
}

// Random lines over a small alphabet: every line where RE2 finds a match
// holds one of the pattern's pairs (the property the search relies on).
TEST_CASE("every match holds one of its pattern's pairs") {
  const std::vector<std::string> patterns = {
      R"(\bE\d{2}\b)",
      R"((?:ERR|E)\d{1,2})",
      R"((?i)\b(?:p|port)\d\s+(?:dn|up)\b)",
      R"(a(?:b|c?d)e)",
      R"(\d:\d{2})",
      R"((?i)s[kx]?\s*w)",
      R"([a-c]+\s?[[:digit:]])",
      R"(x(?:)?y|(?:zz)+)",
      R"(a\b \bb|q\Bq)",
      R"((?:E|R)\d\d)",
      R"((?:ERR|E)\d{2,3})",
      R"(p(?:dn|up)\d)",
      R"((?i)ks\d)",
      R"(\d{2}:\d)",
      R"(e(?:be|zz|\d\d)q?)",
  };
  // Pieces of matches and near misses, joined at random.
  const std::vector<std::string> pieces = {
      "E",  "E1",           "12",  "ERR", "R",  "p",   "Port", "P", "9", " ", "\t",
      "dn", "up",           "a",   "b",   "c",  "cd",  "e",    ":", "s", "S", "k",
      "K",  "\xe2\x84\xaa", "w",   "W",   "x",  "y",   "zz",   "z", "q", "0", "be",
      "p1", "port2",        " dn", " up", "1:", ":12", "3:45"};
  std::mt19937 rng(3);
  for (const std::string& pattern : patterns) {
    INFO(pattern);
    const auto pairs = RequiredBytePairs(pattern);
    REQUIRE(pairs);
    const RE2 re(pattern);
    REQUIRE(re.ok());
    int matched = 0;
    for (int i = 0; i < 60000; ++i) {
      std::string line;
      const std::size_t len = 1 + rng() % 8;
      for (std::size_t j = 0; j < len; ++j) line += pieces[rng() % pieces.size()];
      if (!RE2::PartialMatch(line, re)) continue;
      ++matched;
      bool held = false;
      for (std::size_t j = 0; j + 1 < line.size() && !held; ++j) held = PairAt(*pairs, line, j);
      INFO(line);
      CHECK(held);
    }
    CHECK(matched > 40);
  }
}

std::vector<std::string> MarkedLines(const BytePairLines& lines, const std::string& chunk) {
  std::vector<std::string> out;
  lines.ForEachLine(chunk, [&](std::size_t start, std::size_t end) {
    out.push_back(chunk.substr(start, end - start));
  });
  return out;
}

TEST_CASE("BytePairLines marks the lines holding a pair, and those whose message is rewritten") {
  const std::vector<BytePair> pairs = *RequiredBytePairs(R"(E\d)");
  const BytePairLines lines(pairs);
  // A pair, at a line's start or end; none across a newline.
  CHECK(MarkedLines(lines, "E1 x\nno\nx E2\nE\n3\n") == Strings{"E1 x", "x E2"});
  // JSON records (the message is decoded) and bare "ident:" journal lines
  // (the message gains a space): first line, middle, last without newline.
  CHECK(MarkedLines(lines, "{\"MESSAGE\":\"E\\u0031\"}\nno\n{x}\nt:\nt[1]:\r\nu:") ==
        Strings{"{\"MESSAGE\":\"E\\u0031\"}", "{x}", "t:", "t[1]:\r", "u:"});
  CHECK(MarkedLines(lines, "a:\r").size() == 1);
  CHECK(MarkedLines(lines, "").empty());
  CHECK(MarkedLines(lines, "\n\n").empty());
  // A ':' the pattern needs after a letter is also sought after ']':
  // "ident[pid]: msg" is matched as "ident: msg".
  const BytePairLines colon(*RequiredBytePairs(R"(t:\d)"));
  CHECK(MarkedLines(colon, "t[12]:5\nx\n") == Strings{"t[12]:5"});
  // Each line once, however many pairs it holds.
  CHECK(MarkedLines(lines, "E1E2E3\nE4").size() == 2);
  // A pair marks only with the bytes that must follow it, in its line.
  const BytePairLines four(*RequiredBytePairs(R"(\bE\d{4}\b)"));
  CHECK(MarkedLines(four, "E1\nE12345\nE123\n4\nE1 E123\nxE1234") == Strings{"E12345", "xE1234"});
}

// What BytePairLines must mark, by its definition, one line at a time.
bool MarkedByDefinition(const std::vector<BytePair>& pairs, std::string_view line) {
  if (!line.empty() && line.front() == '{') return true;
  if (!line.empty() && line.back() == ':') return true;
  if (line.find(":\r") != std::string_view::npos) return true;  // at the end, or not
  for (std::size_t j = 0; j + 1 < line.size(); ++j) {
    if (PairAt(pairs, line, j)) return true;
  }
  return false;
}

TEST_CASE("BytePairLines over long chunks marks exactly the lines its definition does") {
  // Lines of 0 to 300 bytes: pairs fall anywhere in the 32-byte blocks the
  // search sifts at once, and across their edges.
  const std::vector<BytePair> pairs = *RequiredBytePairs(R"((?i)\b(?:p|port)\d+\s+(?:dn|down)\b)");
  const std::vector<BytePair> with_colon = *RequiredBytePairs(R"(E\d|x:)");
  const std::vector<BytePair> with_then = *RequiredBytePairs(R"(\bE\d{2}\b|(?i)p\d\s)");
  const std::string bytes = "abcdnDNoOwxE0123456789 :]\r{\t\xe2\xaa";
  std::mt19937 rng(9);
  for (const auto* set : {&pairs, &with_colon, &with_then}) {
    const BytePairLines lines(*set);
    std::string chunk;
    std::vector<std::string> all;
    for (int i = 0; i < 3000; ++i) {
      std::string line;
      const std::size_t len = rng() % 301;
      for (std::size_t j = 0; j < len; ++j) {
        // Mostly bytes that begin no pair, so that pairs stand alone.
        line += rng() % 4 ? 'q' : bytes[rng() % bytes.size()];
      }
      all.push_back(line);
      chunk += line;
      if (i + 1 < 3000) chunk += '\n';
    }
    Strings want;
    for (const std::string& line : all) {
      if (MarkedByDefinition(*set, line)) want.push_back(line);
    }
    CHECK(want.size() > 50);
    CHECK(want.size() < 2900);
    CHECK(MarkedLines(lines, chunk) == want);
  }
}

TEST_CASE("BytePairLines sifts pairs of more first bytes than it has groups") {
  // 14 first bytes, each before bytes of its own (and the pairs BytePairLines
  // adds: "\n{", ":\n", ":\r"): more rows of the pair table than the 8
  // groups the sift keeps, so groups are merged, and no pair may be lost.
  std::vector<BytePair> pairs;
  const std::string firsts = "abcdefghijklmn";
  const std::string seconds = "0123456789!#$%";
  for (std::size_t k = 0; k < firsts.size(); ++k) {
    BytePair pair;
    pair.first.set(static_cast<unsigned char>(firsts[k]));
    pair.second.set(static_cast<unsigned char>(seconds[k]));
    // Two of them with a byte to follow.
    if (k % 7 == 3) pair.then.push_back(ByteSet().set('z'));
    pairs.push_back(pair);
  }
  const BytePairLines lines(pairs);
  const std::string bytes = firsts + seconds + "z :\r{";
  std::mt19937 rng(11);
  std::string chunk;
  std::vector<std::string> all;
  for (int i = 0; i < 4000; ++i) {
    std::string line;
    const std::size_t len = rng() % 200;
    for (std::size_t j = 0; j < len; ++j) line += rng() % 4 ? 'q' : bytes[rng() % bytes.size()];
    all.push_back(line);
    chunk += line;
    if (i + 1 < 4000) chunk += '\n';
  }
  Strings want;
  for (const std::string& line : all) {
    if (MarkedByDefinition(pairs, line)) want.push_back(line);
  }
  CHECK(want.size() > 100);
  CHECK(want.size() < 3900);
  CHECK(MarkedLines(lines, chunk) == want);
}

}  // namespace
}  // namespace faultline
