// SPDX-License-Identifier: Apache-2.0
// Why a pair is required. Each node of the pattern's tree (re2_syntax.h)
// is summed up by the bytes its matches may begin and end with, whether it
// may match nothing, and the pair sets its every match holds. In a
// sequence, a node that cannot match nothing is followed directly by the
// next one that cannot (with the first bytes of any that may match nothing
// in between): the last bytes of one and the first bytes of the next form
// a required pair set. An alternation requires the union of its branches'
// sets, a repeat at least once its operand's. Zero-width assertions (\b, ^,
// $) consume nothing, so the bytes around them stay adjacent.
//
// What is not known is "any byte": a negated class, '.', \pL, a non-ASCII
// character written raw (this reader applies a quantifier to its last
// byte, RE2 to the whole character). A pair with "any byte" on one side is
// no filter and is never chosen. (?i) letters take both cases, and 'k' and
// 's' also the UTF-8 bytes of U+212A KELVIN SIGN and U+017F LONG S, which
// RE2 folds them with. Newline is taken out of every set: a message holds
// none.
#include "matcher/byte_pairs.h"

#include <cstdint>
#include <string>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "matcher/ascii.h"
#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

ByteSet AnyByte() { return ByteSet().set(); }

// Frequency weight of a byte in log text: a pair's estimated frequency is
// the product of its bytes' weights, a set's the sum over its pairs. Only
// the order of the choices comes from this (a scan counts them in its
// input): spaces, letters, digits and the punctuation of times and
// "ident:" prefixes fill log lines; capitals and other punctuation are
// rarer.
double Weight(int b) {
  if (b == ' ') return 8;
  if (b == ':') return 6;
  if ((b >= '0' && b <= '9') || b == '.') return 4;
  if (b >= 'a' && b <= 'z') return 3;
  if (b == '-' || b == '=' || b == '/' || b == '_' || b == '[' || b == ']') return 2;
  if (b >= 'A' && b <= 'Z') return 1.5;
  return 1;
}

double WeightOf(const ByteSet& s) {
  double w = 0;
  for (int b = 0; b < 256; ++b) {
    if (s[static_cast<std::size_t>(b)]) w += Weight(b);
  }
  return w;
}

// Past this a pair set is taken as no filter (a space before any digit
// costs 320, before any lower-case letter 624).
constexpr double kMaxCost = 500;

struct PairSet {
  std::vector<BytePair> pairs;
  double cost = 0;
};

// The bytes that must follow a pair: `head` past its first entry, up to
// the first set that may hold ':' (a journal line's "[pid]" may stand
// before it in the raw line) or any byte. A newline is in no match.
std::vector<ByteSet> ThenOf(const std::vector<ByteSet>& head) {
  std::vector<ByteSet> then;
  for (std::size_t k = 1; k < head.size(); ++k) {
    if (head[k][':'] || head[k].all()) break;
    then.push_back(head[k]);
    then.back().reset('\n');
  }
  return then;
}

// The pair (first, second) followed by the bytes of `then`. Its estimated
// frequency falls by each such byte's share of log text.
PairSet MakeSet(const ByteSet& first, const ByteSet& second, std::vector<ByteSet> then = {}) {
  static const double kAllWeight = WeightOf(AnyByte());
  PairSet s;
  s.cost = WeightOf(first) * WeightOf(second);
  for (const ByteSet& b : then) s.cost *= WeightOf(b) / kAllWeight;
  s.pairs.push_back({first, second, std::move(then)});
  return s;
}

// The choices a node offers, cheapest first, at most kMaxChoices.
constexpr std::size_t kMaxChoices = 4;
using Choices = std::vector<PairSet>;

void Offer(Choices& choices, PairSet set) {
  if (set.cost > kMaxCost) return;
  auto at = choices.begin();
  while (at != choices.end() && at->cost <= set.cost) ++at;
  choices.insert(at, std::move(set));
  if (choices.size() > kMaxChoices) choices.pop_back();
}

// The longest byte sequence a head keeps (a pair and what must follow).
constexpr std::size_t kMaxHead = 8;

struct Summary {
  bool nullable = true;  // may match the empty string
  ByteSet first;         // bytes a non-empty match may begin with
  ByteSet last;          // and end with
  Choices required;      // each a set of pairs every match holds one of
  // Every match begins with a byte of head[0], then one of head[1], ...
  // (empty when not known); `exact`: and is exactly that long, so what
  // follows the node follows its head.
  std::vector<ByteSet> head;
  bool exact = true;
};

// `a` then `b`, when `a` is exact, at most kMaxHead entries.
std::vector<ByteSet> Then(std::vector<ByteSet> a, bool a_exact, const std::vector<ByteSet>& b) {
  if (a_exact) a.insert(a.end(), b.begin(), b.end());
  if (a.size() > kMaxHead) a.resize(kMaxHead);
  return a;
}

ByteSet Range(int lo, int hi) {
  ByteSet s;
  for (int b = lo; b <= hi; ++b) s.set(static_cast<std::size_t>(b));
  return s;
}

ByteSet Digits() { return Range('0', '9'); }
ByteSet Word() { return Range('0', '9') | Range('A', 'Z') | Range('a', 'z') | Range('_', '_'); }
ByteSet Space() {  // RE2's \s: [\t\n\f\r ]
  ByteSet s;
  for (char c : {'\t', '\n', '\f', '\r', ' '}) s.set(static_cast<unsigned char>(c));
  return s;
}

// RE2's POSIX classes are ASCII only; a negated one ("[:^alpha:]") holds
// non-ASCII characters too.
std::optional<ByteSet> Posix(std::string_view text) {
  const std::string_view name = text.substr(2, text.size() - 4);  // inside "[:" ":]"
  if (name == "alnum") return Range('0', '9') | Range('A', 'Z') | Range('a', 'z');
  if (name == "alpha") return Range('A', 'Z') | Range('a', 'z');
  if (name == "ascii") return Range(0, 0x7f);
  if (name == "blank") return Range(' ', ' ') | Range('\t', '\t');
  if (name == "cntrl") return Range(0, 0x1f) | Range(0x7f, 0x7f);
  if (name == "digit") return Digits();
  if (name == "graph") return Range('!', '~');
  if (name == "lower") return Range('a', 'z');
  if (name == "print") return Range(' ', '~');
  if (name == "punct") return Range('!', '/') | Range(':', '@') | Range('[', '`') | Range('{', '~');
  if (name == "space") return Range('\t', '\r') | Range(' ', ' ');
  if (name == "upper") return Range('A', 'Z');
  if (name == "word") return Word();
  if (name == "xdigit") return Range('0', '9') | Range('A', 'F') | Range('a', 'f');
  return std::nullopt;
}

// A class item's bytes; nullopt for what this does not read exactly.
std::optional<ByteSet> ItemBytes(const ReClassItem& item) {
  switch (item.kind) {
    case ReClassItem::Kind::kChar:
      if (static_cast<unsigned char>(item.lo) >= 0x80) return std::nullopt;
      return Range(static_cast<unsigned char>(item.lo), static_cast<unsigned char>(item.lo));
    case ReClassItem::Kind::kRange:
      if (static_cast<unsigned char>(item.lo) >= 0x80 ||
          static_cast<unsigned char>(item.hi) >= 0x80 || item.lo > item.hi) {
        return std::nullopt;
      }
      return Range(static_cast<unsigned char>(item.lo), static_cast<unsigned char>(item.hi));
    case ReClassItem::Kind::kPosix:
      return Posix(item.text);
    case ReClassItem::Kind::kEscape:
      switch (item.lo) {
        case 'd':
          return Digits();
        case 'w':
          return Word();
        case 's':
          return Space();
        case 'n':
          return Range('\n', '\n');
        case 't':
          return Range('\t', '\t');
        case 'r':
          return Range('\r', '\r');
        case 'f':
          return Range('\f', '\f');
        case 'v':
          return Range('\v', '\v');
        default:
          return std::nullopt;  // \x.., \D, \pN, ...
      }
  }
  return std::nullopt;
}

// One character: its first and last bytes. Under (?i), letters take both
// cases, k and s also their non-ASCII folds.
Summary Char(ByteSet first, ByteSet last, bool caseless) {
  if (caseless) {
    const ByteSet f = first, l = last;
    for (std::size_t lower = 'a'; lower <= 'z'; ++lower) {
      const std::size_t upper = lower - 'a' + 'A';
      if (f[lower] || f[upper]) first.set(lower).set(upper);
      if (l[lower] || l[upper]) last.set(lower).set(upper);
    }
    if (f['k'] || f['K']) first.set(0xe2), last.set(0xaa);  // U+212A: e2 84 aa
    if (f['s'] || f['S']) first.set(0xc5), last.set(0xbf);  // U+017F: c5 bf
  }
  Summary s;
  s.nullable = false;
  s.first = first;
  s.last = last;
  s.head = {first};
  // One byte unless a non-ASCII character (of two or more) may stand here.
  s.exact = first == last && !(first >> 128).any();
  return s;
}

Summary Unknown() {
  Summary s = Char(AnyByte(), AnyByte(), false);
  s.head.clear();
  s.exact = false;
  return s;
}

Summary Empty() { return Summary{}; }

Summary Literal(const ReNode& n) {
  const long v = n.value;
  if (v < 0x80) {
    const auto b = static_cast<std::size_t>(v);
    return Char(ByteSet().set(b), ByteSet().set(b), n.caseless);
  }
  // A code point from \x{...} (or \xhh past ASCII) is its UTF-8 bytes;
  // under (?i) its other case may be other bytes.
  if (n.escape != 'x' || n.caseless || v > 0x10ffff) return Unknown();
  const int lead = v < 0x800     ? 0xc0 | static_cast<int>(v >> 6)
                   : v < 0x10000 ? 0xe0 | static_cast<int>(v >> 12)
                                 : 0xf0 | static_cast<int>(v >> 18);
  const int tail = 0x80 | static_cast<int>(v & 0x3f);
  return Char(ByteSet().set(static_cast<std::size_t>(lead)),
              ByteSet().set(static_cast<std::size_t>(tail)), false);
}

Summary Class(const ReNode& n) {
  if (n.negated) return Unknown();
  ByteSet bytes;
  for (const ReClassItem& item : n.items) {
    const std::optional<ByteSet> b = ItemBytes(item);
    if (!b) return Unknown();
    bytes |= *b;
  }
  return Char(bytes, bytes, n.caseless);
}

Summary Escape(const ReNode& n) {
  switch (n.escape) {
    case 'd':
      return Char(Digits(), Digits(), false);
    case 'w':
      return Char(Word(), Word(), false);
    case 's':
      return Char(Space(), Space(), false);
    case 'b':
    case 'B':
    case 'A':
    case 'z':
      return Empty();
    default:
      return Unknown();  // \D \W \S \pN \C ...
  }
}

Summary Summarise(const ReNode& n);

// A sequence: see the top of this file.
Summary Concat(const std::vector<ReNode>& children) {
  std::vector<Summary> parts;
  parts.reserve(children.size());
  for (const ReNode& child : children) parts.push_back(Summarise(child));
  // The head of the sequence from each part on.
  std::vector<std::vector<ByteSet>> heads(parts.size() + 1);
  for (std::size_t j = parts.size(); j-- > 0;) {
    heads[j] = Then(parts[j].head, parts[j].exact, heads[j + 1]);
  }
  Summary out;
  out.head = heads.empty() ? std::vector<ByteSet>{} : heads[0];
  ByteSet pending_last;    // last bytes of the latest node that cannot be empty
  ByteSet between;         // first bytes of the nodes since that may be empty
  bool gap = false;        // one of those may match more than nothing
  bool have_last = false;  // one node that cannot be empty was seen
  for (std::size_t j = 0; j < parts.size(); ++j) {
    Summary& s = parts[j];
    out.exact = out.exact && s.exact;
    for (PairSet& set : s.required) Offer(out.required, std::move(set));
    if (out.nullable) out.first |= s.first;
    if (have_last) {
      if (!s.nullable) {
        Offer(out.required, MakeSet(pending_last, between | s.first,
                                    gap ? std::vector<ByteSet>{} : ThenOf(heads[j])));
      } else {
        between |= s.first;
        gap = gap || !s.exact || !s.head.empty();
      }
    }
    if (!s.nullable) {
      out.nullable = false;
      pending_last = s.last;
      between.reset();
      gap = false;
      have_last = true;
      out.last = s.last;
    } else {
      out.last |= s.last;
    }
  }
  return out;
}

// Every branch must offer a choice; the union of each one's cheapest.
Summary Alternation(const std::vector<ReNode>& branches) {
  if (branches.size() == 1) return Summarise(branches[0]);  // all its choices
  Summary out;
  out.nullable = false;
  PairSet all;
  bool each = !branches.empty();
  bool first_branch = true;
  for (const ReNode& branch : branches) {
    Summary s = Summarise(branch);
    out.nullable = out.nullable || s.nullable;
    out.first |= s.first;
    out.last |= s.last;
    // The head all branches share in length, each entry the union.
    if (first_branch) {
      out.head = s.head;
      out.exact = s.exact;
      first_branch = false;
    } else {
      out.exact = out.exact && s.exact && s.head.size() == out.head.size();
      if (s.head.size() < out.head.size()) out.head.resize(s.head.size());
      for (std::size_t k = 0; k < out.head.size(); ++k) out.head[k] |= s.head[k];
    }
    if (s.required.empty()) {
      each = false;
      continue;
    }
    const PairSet& cheapest = s.required.front();
    all.pairs.insert(all.pairs.end(), cheapest.pairs.begin(), cheapest.pairs.end());
    all.cost += cheapest.cost;
  }
  if (each) Offer(out.required, std::move(all));
  if (out.nullable) out.head.clear();
  return out;
}

Summary Repeat(const ReNode& n) {
  Summary s = Summarise(n.children[0]);
  if (n.min == 0) {
    s.nullable = true;
    s.required.clear();
    s.head.clear();
    s.exact = false;
    return s;
  }
  // The turns after the first that must be taken, one after the other.
  std::vector<ByteSet> rest;
  for (int k = 1; k < n.min && rest.size() < kMaxHead; ++k) rest = Then(rest, true, s.head);
  // At least twice: the end of one turn meets the start of the next, and
  // the rest of the turns that must be taken follow.
  if (n.min >= 2 && !s.nullable) {
    Offer(s.required, MakeSet(s.last, s.first, s.exact ? ThenOf(rest) : std::vector<ByteSet>{}));
  }
  // Every turn that must be taken (how many more may follow is not read
  // here: not exact).
  s.head = Then(std::move(s.head), s.exact, rest);
  s.exact = false;
  return s;
}

Summary Summarise(const ReNode& n) {
  switch (n.kind) {
    case ReNode::Kind::kAlternation:
      return Alternation(n.children);
    case ReNode::Kind::kConcat:
      return Concat(n.children);
    case ReNode::Kind::kGroup:
      return n.children.empty() ? Empty() : Summarise(n.children[0]);
    case ReNode::Kind::kRepeat:
      return Repeat(n);
    case ReNode::Kind::kLiteral:
      // A raw byte past ASCII is part of a character RE2 reads whole.
      return n.value >= 0x80 && n.escape != 'x' ? Unknown() : Literal(n);
    case ReNode::Kind::kClass:
      return Class(n);
    case ReNode::Kind::kEscape:
      return Escape(n);
    case ReNode::Kind::kBeginLine:
    case ReNode::Kind::kEndLine:
    case ReNode::Kind::kFlags:
      return Empty();
    case ReNode::Kind::kAnyChar:
      return Unknown();
  }
  return Unknown();
}

}  // namespace

std::vector<std::vector<BytePair>> BytePairChoices(std::string_view pattern) {
  std::string why;
  const std::optional<ReNode> tree = ParseRe2(pattern, &why);
  if (!tree) return {};
  Summary s = Summarise(*tree);
  std::vector<std::vector<BytePair>> out;
  for (PairSet& set : s.required) {
    for (BytePair& pair : set.pairs) {
      pair.first.reset('\n');
      pair.second.reset('\n');
    }
    out.push_back(std::move(set.pairs));
  }
  return out;
}

std::optional<std::vector<BytePair>> RequiredBytePairs(std::string_view pattern) {
  std::vector<std::vector<BytePair>> choices = BytePairChoices(pattern);
  if (choices.empty()) return std::nullopt;
  return std::move(choices.front());
}

BytePairLines::BytePairLines(std::span<const BytePair> pairs) : table_(1024, 0), checked_(1024, 0) {
  std::vector<unsigned long long> plain(1024, 0);  // a pair alone marks
  auto set = [&](int a, int b, const std::vector<ByteSet>* then = nullptr) {
    const unsigned key = Key(static_cast<unsigned char>(a), static_cast<unsigned char>(b));
    SetBit(table_, key);
    if (then == nullptr || then->empty()) {
      SetBit(plain, key);
    } else {
      then_[key].push_back(*then);
    }
  };
  for (const BytePair& pair : pairs) {
    ByteSet first = pair.first;
    if (pair.second[':']) first.set(']');
    for (int a = 0; a < 256; ++a) {
      if (!first[static_cast<std::size_t>(a)] || a == '\n') continue;
      for (int b = 0; b < 256; ++b) {
        if (pair.second[static_cast<std::size_t>(b)] && b != '\n') set(a, b, &pair.then);
      }
    }
  }
  for (auto it = then_.begin(); it != then_.end();) {
    const unsigned key = it->first;
    if (Bit(plain, key)) {
      it = then_.erase(it);
    } else {
      SetBit(checked_, key);
      ++it;
    }
  }
  // Lines whose message is not a substring of the line: see ForEachLine.
  set('\n', '{');
  set(':', '\n');
  set(':', '\r');
  BuildSiftTables();
}

namespace {

// Bytes as the AVX2 sift sees them: only a byte's low and high nibbles,
// so a set stands for every byte whose low nibble is one of its bytes' and
// high nibble one of its bytes' (a superset).
struct NibbleSet {
  std::uint16_t low = 0;
  std::uint16_t high = 0;
  void Add(unsigned byte) {
    low = static_cast<std::uint16_t>(low | (1u << (byte & 15)));
    high = static_cast<std::uint16_t>(high | (1u << (byte >> 4)));
  }
  NibbleSet Union(const NibbleSet& o) const {
    return {static_cast<std::uint16_t>(low | o.low), static_cast<std::uint16_t>(high | o.high)};
  }
  // How many bytes the sift takes for it.
  unsigned Bytes() const {
    return static_cast<unsigned>(__builtin_popcount(low) * __builtin_popcount(high));
  }
};

// Bytes that begin a pair, with the bytes that may follow them: all the
// first bytes sharing one row of the pair table, then groups merged.
struct SiftGroup {
  NibbleSet first;
  NibbleSet second;
  // Roughly how many of 65,536 byte pairs the sift stops at for it.
  unsigned Cost() const { return first.Bytes() * second.Bytes(); }
};

}  // namespace

void BytePairLines::BuildSiftTables() {
  // First bytes with the same second bytes (E and R before a digit; the
  // spaces before d or D) share a group.
  std::vector<SiftGroup> groups;
  std::vector<std::array<unsigned long long, 4>> rows;
  for (std::size_t a = 0; a < 256; ++a) {
    const std::array<unsigned long long, 4> row = {table_[a * 4], table_[a * 4 + 1],
                                                   table_[a * 4 + 2], table_[a * 4 + 3]};
    if ((row[0] | row[1] | row[2] | row[3]) == 0) continue;
    std::size_t g = 0;
    while (g < rows.size() && rows[g] != row) ++g;
    if (g == rows.size()) {
      rows.push_back(row);
      SiftGroup fresh;
      for (unsigned b = 0; b < 256; ++b) {
        if (Bit(table_, Key(static_cast<unsigned char>(a), static_cast<unsigned char>(b)))) {
          fresh.second.Add(b);
        }
      }
      groups.push_back(fresh);
    }
    groups[g].first.Add(static_cast<unsigned>(a));
  }
  // One bit of a byte per group: past 8, the two groups whose union adds
  // the fewest pairs to the sift's become one (a superset of both).
  while (groups.size() > 8) {
    std::size_t best_i = 0;
    std::size_t best_j = 1;
    std::int64_t best = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (std::size_t j = i + 1; j < groups.size(); ++j) {
        const SiftGroup merged{groups[i].first.Union(groups[j].first),
                               groups[i].second.Union(groups[j].second)};
        const std::int64_t added =
            std::int64_t{merged.Cost()} - std::int64_t{groups[i].Cost() + groups[j].Cost()};
        if ((i == 0 && j == 1) || added < best) {
          best = added;
          best_i = i;
          best_j = j;
        }
      }
    }
    groups[best_i] = {groups[best_i].first.Union(groups[best_j].first),
                      groups[best_i].second.Union(groups[best_j].second)};
    groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(best_j));
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto bit = static_cast<unsigned char>(1u << g);
    for (unsigned k = 0; k < 16; ++k) {
      if (groups[g].first.low >> k & 1) first_low_[k] |= bit;
      if (groups[g].first.high >> k & 1) first_high_[k] |= bit;
      if (groups[g].second.low >> k & 1) second_low_[k] |= bit;
      if (groups[g].second.high >> k & 1) second_high_[k] |= bit;
    }
  }
}

bool BytePairLines::ThenHolds(unsigned key, const unsigned char* p, std::size_t i,
                              std::size_t n) const {
  for (const std::vector<ByteSet>& then : then_.at(key)) {
    if (i + 2 + then.size() > n) continue;
    std::size_t k = 0;
    while (k < then.size() && then[k][p[i + 2 + k]]) ++k;
    if (k == then.size()) return true;
  }
  return false;
}

std::size_t BytePairLines::NextPairBytewise(const unsigned char* p, std::size_t i,
                                            std::size_t n) const {
  while (i + 1 < n && !Holds(p, i, n)) ++i;
  return i;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {

__attribute__((target("avx2"))) __m256i SiftTable(const std::array<unsigned char, 16>& t) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(t.data())));
}

// The groups (a bit each) whose bytes each byte of `v` may be.
__attribute__((target("avx2"))) __m256i SiftGroups(__m256i v, __m256i low_table,
                                                   __m256i high_table) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i low = _mm256_shuffle_epi8(low_table, _mm256_and_si256(v, nibble));
  const __m256i high =
      _mm256_shuffle_epi8(high_table, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
  return _mm256_and_si256(low, high);
}

}  // namespace

// 32 positions at a time: a pair may stand where a byte's group bits (its
// two nibbles' entries, ANDed) share one with the next byte's (the same
// from the second-byte tables); only those positions look up the pair
// table. With the first byte alone, every space and newline of user-fleet's
// lines was looked up (64 M instructions over 16 MiB).
__attribute__((target("avx2"))) std::size_t BytePairLines::NextPairAvx2(const unsigned char* p,
                                                                        std::size_t i,
                                                                        std::size_t n) const {
  const __m256i first_low = SiftTable(first_low_);
  const __m256i first_high = SiftTable(first_high_);
  const __m256i second_low = SiftTable(second_low_);
  const __m256i second_high = SiftTable(second_high_);
  // p[i + 32] is read by the last position's pair: stop one byte early.
  for (; i + 32 < n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i next = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 1));
    const __m256i both = _mm256_and_si256(SiftGroups(v, first_low, first_high),
                                          SiftGroups(next, second_low, second_high));
    auto may = ~static_cast<unsigned>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(both, _mm256_setzero_si256())));
    while (may != 0) {
      const std::size_t at = i + static_cast<std::size_t>(__builtin_ctz(may));
      if (Holds(p, at, n)) return at;
      may &= may - 1;
    }
  }
  return NextPairBytewise(p, i, n);
}

std::size_t BytePairLines::NextPair(const unsigned char* p, std::size_t i, std::size_t n) const {
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return avx2 ? NextPairAvx2(p, i, n) : NextPairBytewise(p, i, n);
}
#else
std::size_t BytePairLines::NextPairAvx2(const unsigned char* p, std::size_t i,
                                        std::size_t n) const {
  return NextPairBytewise(p, i, n);
}

std::size_t BytePairLines::NextPair(const unsigned char* p, std::size_t i, std::size_t n) const {
  return NextPairBytewise(p, i, n);
}
#endif

}  // namespace faultline
