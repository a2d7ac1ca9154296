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
// With byte pairs, only the lines they mark can hold a match (byte_pairs.cc
// says why), and those are searched in a batch: copies joined by '\n'. A
// line's bytes in the batch are its bytes in the chunk, between a newline
// or the batch's start and a newline; in the chunk too, between a newline
// or the chunk's start and a newline or its end. The combined regex reads
// no context but through (?m:^) and (?m:$) (the rules' own anchors and
// word boundaries are gone), and those see the same on both sides, so a
// line of the batch holds a match exactly when the line of the chunk does,
// and the argument above, run over the batch, names it.
#include "matcher/unfiltered_search.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "matcher/count_newlines.h"
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
// find each atom's extent, and copies everything else verbatim.
class Relaxer {
 public:
  explicit Relaxer(std::string_view p) : p_(p) {}

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
      } else {
        // An unbounded repeat of '.' takes a "[pid]" (no newline in it) by
        // itself: wrapping it only adds DFA states.
        const bool pid_by_itself = c == '.' && RepeatIsUnbounded(i_ + 1);
        Atom(p_.substr(i_, 1), (c == '.' || c == ':') && !pid_by_itself, i_ + 1);
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
        for (char ch : q.text) QuotedByte(ch);
        i_ = q.end;
        return true;
      }
      default:
        break;
    }
    const std::size_t end = EscapeEnd(i_);
    if (end == 0) return false;
    bool colon = true;  // unless known otherwise
    if (e == 'x') {
      const std::optional<HexEscape> h = ReadHexEscape(p_, i_ + 2);
      colon = !h || h->value == ':';
    } else if (e == 'd' || e == 'w' || e == 's' || e == 'n' || e == 't' || e == 'r' || e == 'f' ||
               e == 'v' || e == 'a') {
      colon = false;
    } else if (!IsAlnum(e)) {
      colon = e == ':';  // escaped punctuation: itself
    }
    Atom(p_.substr(i_, end - i_), colon, end);
    i_ = end;
    return true;
  }

  // One byte of \Q...\E, written so that it means itself outside \Q.
  void QuotedByte(char ch) {
    const auto u = static_cast<unsigned char>(ch);
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
  }

  // [...] as RE2 reads it: ']' first is a literal, "[:name:]" a POSIX
  // class, a backslash escapes one character (or a \x, \p, octal run).
  // Whether it can match ':' is decided from its items; a negated class,
  // or an item not worked out here, is taken to match it.
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
        text += c;
        ++at;
        return static_cast<unsigned char>(c);
      }
      if (at + 1 >= p_.size()) return -2;
      const char e = p_[at + 1];
      const std::size_t end = EscapeEnd(at);
      if (end == 0) return -2;
      int stands_for = -1;
      if (!IsAlnum(e)) {
        stands_for = static_cast<unsigned char>(e);
      } else if (e == 'x') {
        const std::optional<HexEscape> h = ReadHexEscape(p_, at + 2);
        if (!h) return -2;
        stands_for = h->value < 0x80 ? static_cast<int>(h->value) : -1;
        if (stands_for < 0) colon = true;  // past ASCII: not worked out
      } else if (e != 'd' && e != 'w' && e != 's' && e != 'n' && e != 't' && e != 'r' && e != 'f' &&
                 e != 'v' && e != 'a') {
        colon = true;  // \S \W \D \p, octal: not worked out
      }
      text += p_.substr(at, end - at);
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
      } else if (lo == ':') {
        colon = true;
      }
    }
    if (j >= p_.size()) return false;
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
  std::size_t i_ = 0;
  std::string out_;
};

// The lines of `sample` that `lines` marks, counted up to `limit` (the
// count that decides nothing more: a choice as bad as the best so far).
std::size_t MarkedLines(const BytePairLines& lines, std::string_view sample,
                        std::size_t limit = SIZE_MAX) {
  std::size_t n = 0;
  lines.ForEachLine(sample, [&](std::size_t, std::size_t) { return ++n < limit; });
  return n;
}

// The share of a sample's lines (percent) that the byte pairs may mark and
// still be used. Measured (callgrind, user-loose's real 16 MiB corpus,
// about two thirds of its lines marked): 630 M instructions searching
// every byte, 727 M line by line with 75 here.
constexpr std::size_t kMostMarkedPercent = 50;

// The byte pairs of the patterns as written, each pattern's choice the one
// on fewest lines of the sample: a relaxed pattern's match holds them too,
// but for the "[pid]" before a ':' (BytePairLines takes ']' for that) and
// the lines of cases (a) and (b), which BytePairLines always marks.
std::optional<BytePairLines> BytePairsOf(std::span<const std::string_view> patterns,
                                         std::string_view sample) {
  // Its lines: one per newline, and one more if the last has none.
  const auto sample_lines =
      static_cast<std::size_t>(CountNewlines(sample.data(), sample.data() + sample.size()) +
                               (sample.empty() || sample.back() == '\n' ? 0 : 1));
  // Past this many marked lines RE2 over every byte costs less than line
  // by line (bench/README.md, "Rules without a literal, round 3").
  const std::size_t most = sample_lines * kMostMarkedPercent / 100 + 1;
  std::vector<BytePair> pairs;
  for (std::string_view p : patterns) {
    const std::vector<std::vector<BytePair>> choices = BytePairChoices(p);
    if (choices.empty()) return std::nullopt;
    std::size_t pick = 0;
    std::size_t fewest = most;
    for (std::size_t k = 0; k < choices.size() && !sample.empty(); ++k) {
      const std::size_t marked = MarkedLines(BytePairLines(choices[k]), sample, fewest);
      if (marked < fewest) {
        fewest = marked;
        pick = k;
      }
    }
    // Even its fewest are too many: so are all patterns' together.
    if (fewest >= most && !sample.empty()) return std::nullopt;
    pairs.insert(pairs.end(), choices[pick].begin(), choices[pick].end());
  }
  BytePairLines lines(pairs);
  if (!sample.empty() && MarkedLines(lines, sample, most) >= most) return std::nullopt;
  return lines;
}

}  // namespace

std::optional<std::string> RelaxForRawLines(std::string_view pattern) {
  return Relaxer(pattern).Run();
}

std::unique_ptr<UnfilteredSearch> UnfilteredSearch::Build(
    std::span<const std::string_view> patterns, std::string_view sample) {
  if (patterns.empty()) return nullptr;
  std::string combined;
  for (std::string_view p : patterns) {
    std::optional<std::string> relaxed = RelaxForRawLines(p);
    if (!relaxed) return nullptr;
    combined += "(?:";
    combined += *relaxed;
    combined += ")|";
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
  return std::unique_ptr<UnfilteredSearch>(
      new UnfilteredSearch(std::move(re), BytePairsOf(patterns, sample)));
}

namespace {

// Calls on_line(start) with the offset in `text` of each line holding a
// match of `re`, ascending, each once; `text` holds whole lines.
template <typename F>
void ForEachMatchingLine(const RE2& re, std::string_view text, F&& on_line) {
  const char* const base = text.data();
  const std::size_t size = text.size();
  const re2::StringPiece piece(base, size);
  re2::StringPiece match;
  for (std::size_t pos = 0; pos < size;) {
    // `pos` is a line's start. One submatch: where the match is (its start
    // costs a reverse DFA pass over the match only, as no match spans a
    // newline).
    if (!re.Match(piece, pos, size, RE2::UNANCHORED, &match, 1)) return;
    const std::size_t at = static_cast<std::size_t>(match.data() - base);
    const void* nl = at > pos ? memrchr(base + pos, '\n', at - pos) : nullptr;
    on_line(nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - base) + 1 : pos);
    const void* next = std::memchr(base + at, '\n', size - at);
    if (next == nullptr) return;
    pos = static_cast<std::size_t>(static_cast<const char*>(next) - base) + 1;
  }
}

}  // namespace

void UnfilteredSearch::Lines(std::string_view chunk, std::vector<std::size_t>& starts) const {
  if (!pairs_) {
    ForEachMatchingLine(*re_, chunk, [&](std::size_t start) { starts.push_back(start); });
    return;
  }
  // Each line with a match holds one of the pairs (byte_pairs.cc) or is
  // one BytePairLines always marks; the regex decides on those alone.
  // RE2 costs ~3,000 instructions a call before it reads a byte, so the
  // marked lines are copied into a batch, each with its newline, and
  // searched together: a line of the batch is the line of the chunk
  // between the same newlines (or the batch's ends, which (?m:^) and
  // (?m:$) take as the chunk's: see the top of this file), so it holds a
  // match exactly when the line in the chunk does.
  std::string batch;
  // Where each line of the batch starts in the batch and in the chunk.
  std::vector<std::pair<std::size_t, std::size_t>> origin;
  auto search_batch = [&] {
    std::size_t k = 0;
    ForEachMatchingLine(*re_, batch, [&](std::size_t start) {
      while (origin[k].first < start) ++k;
      starts.push_back(origin[k].second);
    });
    batch.clear();
    origin.clear();
  };
  const re2::StringPiece text(chunk.data(), chunk.size());
  pairs_->ForEachLine(chunk, [&](std::size_t start, std::size_t end) {
    const std::size_t length = end - start;
    if (batch.size() + length + 1 > kBatchBytes && !batch.empty()) search_batch();
    if (length + 1 > kBatchBytes) {  // a line longer than a batch: in place
      if (re_->Match(text, start, end, RE2::UNANCHORED, nullptr, 0)) starts.push_back(start);
      return;
    }
    if (batch.empty()) batch.reserve(kBatchBytes);
    origin.emplace_back(batch.size(), start);
    batch.append(chunk.data() + start, length);
    batch += '\n';
  });
  if (!batch.empty()) search_batch();
}

}  // namespace faultline
