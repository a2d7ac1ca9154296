// SPDX-License-Identifier: Apache-2.0
// Why no line is lost. ScanRaw matches a rule on the message M that
// ParseInputLine takes from a raw line L. M is one of:
//   (a) a JSON record's MESSAGE (L starts with '{'): any text;
//   (b) "ident: " for a journal-short line ending in "ident:" or
//       "ident[pid]:" (and an optional '\r'): a space L does not hold;
//   (c) "ident: msg" for a journal-short line "ident[pid]: msg";
//   (d) otherwise a substring of L (plain, dmesg, journal kernel lines,
//       "ident: msg" without a pid, CRI content, L without its '\r').
// Lines of (a) and (b) are found by two alternatives of their own,
// "(?m:^)\{" and ":\r?(?m:$)". For (c) and (d): say the rule's pattern P
// matches M at [s, e). RelaxForRawLines(P) = P' only removes zero-width
// assertions (a superset) and lets every atom that can match ':' take a
// "[pid]" first, so P' matches M[s, e) with no context around it, and in
// case (c) also the bytes of L where "[pid]" stands again before the ':'.
// M[s, e) holds no newline (M is within one line), and never_nl only
// removes '\n' from what may be matched, so the combined regex still
// matches it. So each line with a match holds a match of the combined
// regex. A match never spans a newline, so the leftmost match searched
// from a line's start lies on that line or a later one; Lines() marks its
// line and resumes at the next line's start, and by induction reaches
// every line that holds a match.
#include "matcher/unfiltered_search.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <hs/hs.h>

#include "matcher/re2_syntax.h"

namespace faultline {
namespace {

// What a journal-short line holds, and its message does not, between the
// identifier and ": " (input_line.cc's SplitTag: from the tag's first '['
// to its last ']', no space).
constexpr std::string_view kPid = "(?:\\[[^ \\n]*\\])?";
// Replaces a zero-width assertion, so that a quantifier after it still
// has its own (empty) operand.
constexpr std::string_view kEmpty = "(?:)";
// Cases (a) and (b) at the top of this file, in RE2's syntax.
constexpr std::string_view kJsonLine = "(?m:^)\\{";
constexpr std::string_view kBareTag = ":\\r?(?m:$)";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsOctal(char c) { return c >= '0' && c <= '7'; }

// Reads an RE2 pattern as RE2 does (parse.cc) only as far as it must to
// find each atom's extent, and copies everything else verbatim. For
// Vectorscan (PCRE syntax, searched byte by byte), it also writes out what
// the two read differently (\s \S \W \D \v, '.', negated classes) so that
// on ASCII text it matches what RE2 does, never a newline; and refuses
// what it cannot (anything not ASCII, \p, octal, a newline in the pattern).
class Relaxer {
 public:
  Relaxer(std::string_view p, RelaxFor dialect)
      : p_(p), vs_(dialect == RelaxFor::kVectorscanAscii) {}

  std::optional<std::string> Run() {
    while (i_ < p_.size()) {
      const char c = p_[i_];
      bool ok = true;
      if (c == '\\') {
        ok = Escape();
      } else if (c == '[') {
        ok = Class();
      } else if (c == '(') {
        ok = Group();
      } else if (c == '^' || c == '$') {
        out_ += kEmpty;
        ++i_;
      } else if (vs_ && static_cast<unsigned char>(c) >= 0x80) {
        ok = false;
      } else {
        // An unbounded repeat of '.' takes a "[pid]" (no newline in it) by
        // itself: wrapping it would cost Vectorscan its dot-star.
        const bool pid_by_itself = c == '.' && RepeatIsUnbounded(i_ + 1);
        Atom(vs_ && c == '.' ? std::string_view("[^\\n]") : p_.substr(i_, 1),
             (c == '.' || c == ':') && !pid_by_itself, i_ + 1);
        ++i_;
      }
      if (!ok) return std::nullopt;
    }
    return std::move(out_);
  }

 private:
  // Whether a quantifier at `at` repeats without bound: '*', '+', "{n,}".
  bool RepeatIsUnbounded(std::size_t at) const {
    if (at >= p_.size()) return false;
    if (p_[at] == '*' || p_[at] == '+') return true;
    if (p_[at] != '{') return false;
    const std::optional<CountedRepeat> r = ReadCountedRepeat(p_, at);
    return r && !r->body.empty() && r->body.back() == ',';
  }

  // Whether the pattern at `at` (just after an atom) goes on with one
  // character, matched exactly once, that is never a space. Then that atom
  // never matches the ':' of a journal line's "ident: " (a space follows
  // it in the message), and needs no "[pid]" before it.
  bool NextCannotBeSpace(std::size_t at) const {
    if (at >= p_.size()) return false;
    const char c = p_[at];
    std::size_t next = at + 1;
    if (c == '\\') {
      if (at + 1 >= p_.size()) return false;
      const char e = p_[at + 1];
      const bool plain_punct = !IsAlnum(e) && e != ' ' && static_cast<unsigned char>(e) < 0x80;
      if (e != 'd' && e != 'w' && !plain_punct) return false;
      next = at + 2;
    } else if (c == '[') {
      // A plain class such as [0-9a-f] or [A-Z_.]: letters, digits and
      // "-_.:" only.
      const std::size_t close = p_.find(']', at + 1);
      if (close == std::string_view::npos || close == at + 1) return false;
      for (std::size_t k = at + 1; k < close; ++k) {
        if (!IsAlnum(p_[k]) && std::string_view("-_.:").find(p_[k]) == std::string_view::npos) {
          return false;
        }
      }
      if (p_[at + 1] == '-' && close == at + 2) return false;
      next = close + 1;
    } else if (!IsAlnum(c) &&
               std::string_view("-_=,;\"'/<>@#%&~!`:").find(c) == std::string_view::npos) {
      return false;
    }
    // Matched at least once: not '?', '*' or "{0,...}".
    if (next >= p_.size() || p_[next] == '+') return true;
    if (p_[next] == '?' || p_[next] == '*') return false;
    if (p_[next] == '{') {
      const std::optional<CountedRepeat> r = ReadCountedRepeat(p_, next);
      return !r || r->min > 0;
    }
    return true;
  }

  // Writes an atom of the pattern that ends at `end` (npos: not in the
  // pattern as written), with a "[pid]" before it if it may match the ':'
  // after a journal identifier.
  void Atom(std::string_view text, bool may_match_colon, std::size_t end) {
    if (may_match_colon && end != std::string_view::npos && NextCannotBeSpace(end)) {
      may_match_colon = false;
    }
    if (!may_match_colon) {
      out_ += text;
      return;
    }
    out_ += "(?:";
    out_ += kPid;
    out_ += text;
    out_ += ')';
  }

  // The end of "\x{...}", "\xhh", "\p{...}", "\pL" or an octal escape
  // starting at `at` (on the backslash); 0 if malformed.
  std::size_t EscapeEnd(std::size_t at) const {
    const char e = p_[at + 1];
    std::size_t end = at + 2;
    if (e == 'x' || e == 'p' || e == 'P') {
      if (end < p_.size() && p_[end] == '{') {
        const std::size_t close = p_.find('}', end);
        return close == std::string_view::npos ? 0 : close + 1;
      }
      end += e == 'x' ? 2 : 1;
      return end <= p_.size() ? end : 0;
    }
    if (IsOctal(e)) {
      while (end < p_.size() && end < at + 4 && IsOctal(p_[end])) ++end;
    }
    return end;
  }

  bool Escape() {
    if (i_ + 1 >= p_.size()) return false;
    const char e = p_[i_ + 1];
    switch (e) {
      case 'b':
      case 'B':
      case 'A':
      case 'z':
        out_ += kEmpty;
        i_ += 2;
        return true;
      case 'C':  // any byte, a newline too: nothing here can keep it in a line
        return false;
      case 'Q': {
        const Quoted q = ReadQuoted(p_, i_ + 2);
        for (char ch : q.text) {
          if (!QuotedByte(ch)) return false;
        }
        i_ = q.end;
        return true;
      }
      default:
        break;
    }
    const std::size_t end = EscapeEnd(i_);
    if (end == 0) return false;
    bool colon = true;  // unless known otherwise
    std::string_view text = p_.substr(i_, end - i_);
    if (e == 'x') {
      const std::optional<HexEscape> h = ReadHexEscape(p_, i_ + 2);
      colon = !h || h->value == ':';
      if (vs_ && (!h || h->value >= 0x80 || h->value == '\n')) return false;
    } else if (e == 'd' || e == 'w' || e == 's' || e == 'n' || e == 't' || e == 'r' || e == 'f' ||
               e == 'v' || e == 'a') {
      colon = false;
      if (vs_) {
        if (e == 'n') return false;
        if (e == 's') text = "[\\t\\f\\r ]";  // RE2's \s, without its \n (PCRE's has \v)
        if (e == 'v') text = "\\x0b";         // PCRE's \v is a class
      }
    } else if (!IsAlnum(e)) {
      colon = e == ':';  // escaped punctuation: itself
    } else if (vs_) {
      if (e == 'S') {
        text = "[^\\t\\n\\f\\r ]";  // RE2's \S holds \v, PCRE's does not
      } else if (e == 'W') {
        text = "[^0-9A-Za-z_\\n]";
      } else if (e == 'D') {
        text = "[^0-9\\n]";
      } else {
        return false;  // \p \P, octal, what RE2 itself refuses
      }
    }
    Atom(text, colon, end);
    i_ = end;
    return true;
  }

  // One byte of \Q...\E, written so that it means itself outside \Q.
  bool QuotedByte(char ch) {
    const auto u = static_cast<unsigned char>(ch);
    if (vs_ && (u >= 0x80 || ch == '\n')) return false;
    if (IsAlnum(ch) || u >= 0x80) {
      out_ += ch;
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out_ += "\\x";
      out_ += kHex[u >> 4];
      out_ += kHex[u & 15];
    } else {
      const char escaped[2] = {'\\', ch};
      Atom(std::string_view(escaped, 2), ch == ':', std::string_view::npos);
    }
    return true;
  }

  // [...] as RE2 reads it: ']' first is a literal, "[:name:]" a POSIX
  // class, a backslash escapes one character (or a \x, \p, octal run).
  // Whether it can match ':' is decided from its items; a negated class,
  // or an item not worked out here, is taken to match it. For Vectorscan a
  // negated class also leaves out '\n', and an item that may hold '\n' or
  // a byte past ASCII refuses the pattern.
  bool Class() {
    std::size_t j = i_ + 1;
    bool colon = false;
    const bool negated = j < p_.size() && p_[j] == '^';
    std::string text = "[";
    if (negated) {
      colon = true;
      text += '^';
      ++j;
    }
    bool first = true;
    // Copies one item at `at`; returns the character it stands for, -1 when
    // it is not one character, -2 when the class cannot be relaxed.
    auto item = [&](std::size_t& at) -> int {
      const char c = p_[at];
      if (c != '\\') {
        if (vs_ && (static_cast<unsigned char>(c) >= 0x80 || c == '\n')) return -2;
        text += c;
        ++at;
        return static_cast<unsigned char>(c);
      }
      if (at + 1 >= p_.size()) return -2;
      const char e = p_[at + 1];
      const std::size_t end = EscapeEnd(at);
      if (end == 0) return -2;
      std::string_view written = p_.substr(at, end - at);
      int stands_for = -1;
      if (!IsAlnum(e)) {
        stands_for = static_cast<unsigned char>(e);
        if (vs_ && stands_for >= 0x80) return -2;
      } else if (e == 'x') {
        const std::optional<HexEscape> h = ReadHexEscape(p_, at + 2);
        if (!h) return -2;
        stands_for = h->value < 0x80 ? static_cast<int>(h->value) : -1;
        if (vs_ && (stands_for < 0 || stands_for == '\n')) return -2;
      } else if (e == 'd' || e == 'w' || e == 't' || e == 'r' || e == 'f' || e == 'a') {
        // none of them ':'
      } else if (vs_ && e == 's') {
        written = "\\t\\f\\r ";
      } else if (vs_ && e == 'v') {
        written = "\\x0b";
      } else if (vs_) {
        return -2;  // \n \S \W \D \p, octal: may hold '\n' or differ from RE2's
      } else if (e != 's' && e != 'n' && e != 'v') {
        colon = true;  // \S \W \D \p, octal: not worked out
      }
      text += written;
      at = end;
      return stands_for;
    };
    while (j < p_.size() && (p_[j] != ']' || first)) {
      first = false;
      if (p_.compare(j, 2, "[:") == 0) {
        const std::size_t close = p_.find(":]", j + 2);
        if (close == std::string_view::npos) return false;
        const std::string_view name = p_.substr(j, close + 2 - j);
        if (name == "[:punct:]" || name == "[:graph:]" || name == "[:print:]" ||
            name == "[:ascii:]" || name.substr(0, 3) == "[:^") {
          colon = true;
        }
        // These may hold '\n' (or, negated, anything).
        if (vs_ && (name == "[:space:]" || name == "[:cntrl:]" || name == "[:ascii:]" ||
                    name.substr(0, 3) == "[:^")) {
          return false;
        }
        text += name;
        j = close + 2;
        continue;
      }
      const int lo = item(j);
      if (lo == -2) return false;
      if (j + 1 < p_.size() && p_[j] == '-' && p_[j + 1] != ']') {
        text += '-';
        ++j;
        const int hi = item(j);
        if (hi == -2) return false;
        if (lo < 0 || hi < 0 || (lo <= ':' && ':' <= hi)) colon = true;
        if (vs_ && (lo < 0 || hi < 0 || (lo <= '\n' && '\n' <= hi))) return false;
      } else if (lo == ':') {
        colon = true;
      }
    }
    if (j >= p_.size()) return false;
    if (vs_ && negated) text += "\\n";
    text += ']';
    Atom(text, colon, j + 1);
    i_ = j + 1;
    return true;
  }

  // Groups lose their names and captures (several rules in one regex may
  // use one name); flag groups stay as written.
  bool Group() {
    if (i_ + 1 < p_.size() && p_[i_ + 1] == '?') {
      const std::optional<GroupOpen> open = ReadGroupOpen(p_, i_ + 2);
      if (!open) return false;
      if (open->named) {
        out_ += "(?:";
      } else {
        out_ += p_.substr(i_, open->end - i_);
      }
      i_ = open->end;
      return true;
    }
    out_ += "(?:";
    ++i_;
    return true;
  }

  std::string_view p_;
  bool vs_;  // writing for Vectorscan
  std::size_t i_ = 0;
  std::string out_;
};

// A byte past ASCII in [p, end): its address, or null. 16 bytes at a time
// where SSE2 is (x86-64's baseline), 8 elsewhere.
const char* FindNonAscii(const char* p, const char* end) {
#if defined(__SSE2__)
  while (end - p >= 16) {
    const int mask = _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (end - p >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    if (v & 0x8080808080808080ULL) break;
    p += 8;
  }
  for (; p < end; ++p) {
    if (static_cast<unsigned char>(*p) >= 0x80) return p;
  }
  return nullptr;
}

struct HsLines {
  const char* base;
  std::size_t size;
  std::vector<std::size_t>* starts;
  std::size_t line_end = 0;  // end of the last line marked; valid when `marked`
  bool marked = false;
};

// Matches arrive in increasing order of `to`; a match holds no newline and
// is never empty, so its last byte is on its line.
int OnHsMatch(unsigned /*id*/, unsigned long long /*from*/, unsigned long long to,
              unsigned /*flags*/, void* context) {
  auto* h = static_cast<HsLines*>(context);
  const std::size_t last = static_cast<std::size_t>(to) - 1;
  if (h->marked && last < h->line_end) return 0;  // its line is marked already
  const void* nl = last > 0 ? memrchr(h->base, '\n', last) : nullptr;
  h->starts->push_back(nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - h->base) + 1
                          : 0);
  const void* next = std::memchr(h->base + last, '\n', h->size - last);
  h->line_end = next ? static_cast<std::size_t>(static_cast<const char*>(next) - h->base) : h->size;
  h->marked = true;
  return 0;
}

}  // namespace

std::optional<std::string> RelaxForRawLines(std::string_view pattern, RelaxFor dialect) {
  return Relaxer(pattern, dialect).Run();
}

struct UnfilteredSearch::Vectorscan {
  hs_database_t* db = nullptr;
  hs_scratch_t* prototype = nullptr;
  mutable std::mutex mu;
  mutable std::vector<hs_scratch_t*> pool;  // idle scratches, one per concurrent Lines()

  ~Vectorscan() {
    for (hs_scratch_t* s : pool) hs_free_scratch(s);
    if (prototype) hs_free_scratch(prototype);
    if (db) hs_free_database(db);
  }

  // The relaxed patterns in one block-mode database, or null when
  // Vectorscan refuses one (it then is not used: RE2 searches alone).
  static std::unique_ptr<Vectorscan> Build(const std::vector<std::string>& patterns) {
    std::vector<const char*> exprs;
    std::vector<unsigned> flags, ids;
    for (const std::string& p : patterns) {
      exprs.push_back(p.c_str());
      flags.push_back(HS_FLAG_MULTILINE);  // for cases (a) and (b); no other anchor is left
      ids.push_back(static_cast<unsigned>(ids.size()));
    }
    auto out = std::make_unique<Vectorscan>();
    hs_compile_error_t* error = nullptr;
    if (hs_compile_multi(exprs.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK, nullptr, &out->db,
                         &error) != HS_SUCCESS) {
      hs_free_compile_error(error);
      return nullptr;
    }
    if (hs_alloc_scratch(out->db, &out->prototype) != HS_SUCCESS) return nullptr;
    return out;
  }

  // Appends the lines of `chunk` with a match; false if Vectorscan failed.
  bool Lines(std::string_view chunk, std::vector<std::size_t>& starts) const {
    if (chunk.size() > UINT_MAX) return false;
    hs_scratch_t* scratch = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!pool.empty()) {
        scratch = pool.back();
        pool.pop_back();
      }
    }
    if (!scratch && hs_clone_scratch(prototype, &scratch) != HS_SUCCESS) return false;
    const std::size_t first = starts.size();
    HsLines h{chunk.data(), chunk.size(), &starts};
    const hs_error_t rc =
        hs_scan(db, chunk.data(), static_cast<unsigned>(chunk.size()), 0, scratch, &OnHsMatch, &h);
    {
      std::lock_guard<std::mutex> lock(mu);
      pool.push_back(scratch);
    }
    if (rc != HS_SUCCESS) starts.resize(first);
    return rc == HS_SUCCESS;
  }
};

UnfilteredSearch::UnfilteredSearch(std::unique_ptr<RE2> re, std::unique_ptr<Vectorscan> vs)
    : re_(std::move(re)), vs_(std::move(vs)) {}
UnfilteredSearch::~UnfilteredSearch() = default;

std::unique_ptr<UnfilteredSearch> UnfilteredSearch::Build(
    std::span<const std::string_view> patterns) {
  if (patterns.empty()) return nullptr;
  std::string combined;
  std::vector<std::string> for_vectorscan;
  bool vectorscan = true;
  for (std::string_view p : patterns) {
    std::optional<std::string> relaxed = RelaxForRawLines(p, RelaxFor::kRe2);
    if (!relaxed) return nullptr;
    combined += "(?:";
    combined += *relaxed;
    combined += ")|";
    if (vectorscan) {
      std::optional<std::string> ascii = RelaxForRawLines(p, RelaxFor::kVectorscanAscii);
      vectorscan = ascii.has_value();
      if (ascii) for_vectorscan.push_back(std::move(*ascii));
    }
  }
  // Cases (a) and (b) at the top of this file.
  combined += kJsonLine;
  combined += '|';
  combined += kBareTag;
  RE2::Options options;
  options.set_log_errors(false);
  options.set_never_nl(true);
  // The DFA of a few loose rules (a class per atom) stays well below this;
  // it is memory RE2 may take, not memory it takes.
  options.set_max_mem(std::int64_t{64} << 20);
  auto re = std::make_unique<RE2>(combined, options);
  if (!re->ok()) return nullptr;
  if (RE2::PartialMatch("", *re)) return nullptr;  // it would mark every line
  std::unique_ptr<Vectorscan> vs;
  if (vectorscan) {
    for_vectorscan.emplace_back("^\\{");
    for_vectorscan.emplace_back(":\\r?$");
    vs = Vectorscan::Build(for_vectorscan);
  }
  return std::unique_ptr<UnfilteredSearch>(new UnfilteredSearch(std::move(re), std::move(vs)));
}

void UnfilteredSearch::Re2Lines(std::string_view chunk, std::size_t from, std::size_t to,
                                std::vector<std::size_t>& starts) const {
  const char* const base = chunk.data();
  const re2::StringPiece text(base, chunk.size());
  re2::StringPiece match;
  for (std::size_t pos = from; pos < to;) {
    // `pos` is a line's start. One submatch: where the match is (its start
    // costs a reverse DFA pass over the match only, as no match spans a
    // newline).
    if (!re_->Match(text, pos, to, RE2::UNANCHORED, &match, 1)) return;
    const std::size_t at = static_cast<std::size_t>(match.data() - base);
    const void* nl = at > pos ? memrchr(base + pos, '\n', at - pos) : nullptr;
    starts.push_back(nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1 : pos);
    const void* next = std::memchr(base + at, '\n', to - at);
    if (next == nullptr) return;
    pos = static_cast<std::size_t>(static_cast<const char*>(next) - base) + 1;
  }
}

void UnfilteredSearch::Lines(std::string_view chunk, std::vector<std::size_t>& starts) const {
  const std::size_t first = starts.size();
  if (!vs_ || !vs_->Lines(chunk, starts)) {
    Re2Lines(chunk, 0, chunk.size(), starts);
    return;
  }
  // Vectorscan's answer holds for ASCII lines; a line with any other byte
  // is searched by RE2 as well (UTF-8: '.', classes and case folding).
  const std::size_t from_vectorscan = starts.size();
  const char* const base = chunk.data();
  const char* const end = base + chunk.size();
  for (const char* p = base; (p = FindNonAscii(p, end)) != nullptr;) {
    const void* nl = memrchr(base, '\n', static_cast<std::size_t>(p - base));
    const std::size_t line =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1 : 0;
    const void* next = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    const std::size_t stop =
        next ? static_cast<std::size_t>(static_cast<const char*>(next) - base) : chunk.size();
    Re2Lines(chunk, line, stop, starts);
    if (next == nullptr) break;
    p = static_cast<const char*>(next) + 1;
  }
  if (starts.size() == from_vectorscan) return;
  const auto begin = starts.begin() + static_cast<std::ptrdiff_t>(first);
  std::inplace_merge(begin, starts.begin() + static_cast<std::ptrdiff_t>(from_vectorscan),
                     starts.end());
  starts.erase(std::unique(begin, starts.end()), starts.end());
}

}  // namespace faultline
