// SPDX-License-Identifier: Apache-2.0
#include "matcher/classify.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "base/trim.h"

namespace faultline {
namespace {

std::optional<long long> ToNumber(std::string_view s) {
  long long v = 0;
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "144-150" -> {144, 150}; nullopt for anything that is not a range.
std::optional<std::pair<long long, long long>> AsRange(std::string_view item) {
  std::size_t dash = item.find('-', 1);
  if (dash == std::string_view::npos) return std::nullopt;
  auto lo = ToNumber(item.substr(0, dash));
  auto hi = ToNumber(item.substr(dash + 1));
  if (!lo || !hi) return std::nullopt;
  return std::pair(*lo, *hi);
}

// Applies `o` to `m`, but for the summary: `summary` becomes the template
// that applies, written once by the caller.
void Apply(const Outcome& o, RuleMatch& m, const std::string*& summary) {
  if (o.category) m.category = *o.category;
  if (o.severity) m.severity = *o.severity;
  if (o.action) m.action = *o.action;
  if (o.summary) summary = &*o.summary;
  if (o.threshold) m.threshold = o.threshold;
  if (o.expire) m.expire = o.expire;
  if (o.condition) m.condition = *o.condition;
  if (o.recover) m.recover = *o.recover;
}

const Outcome* ClassifyFields(const Classification& c,
                              const std::map<std::string, std::string>& fields) {
  auto it = fields.find(c.capture);
  return Classify(c,
                  it == fields.end() ? std::nullopt : std::optional<std::string_view>(it->second));
}

}  // namespace

std::vector<std::string> SplitValueKey(std::string_view key) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = key.find(',', start);
    items.emplace_back(TrimSpaces(key.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

// Calls `f(item)` for each trimmed item of a comma list, without allocating:
// this runs for every match of a classifying rule (every Xid line of a flood).
template <typename F>
bool AnyItem(std::string_view key, F f) {
  while (true) {
    std::size_t comma = key.find(',');
    if (f(TrimSpaces(key.substr(0, comma)))) return true;
    if (comma == std::string_view::npos) return false;
    key.remove_prefix(comma + 1);
  }
}

const Outcome* Classify(const Classification& c, std::optional<std::string_view> value) {
  if (!value) return &c.fallback;
  // Most entries are one exact value ("79"): a map lookup, no scan.
  if (auto it = c.table.find(std::string(*value)); it != c.table.end()) return &it->second;
  for (const auto& [key, outcome] : c.table) {
    if (key.find(',') == std::string::npos) continue;
    if (AnyItem(key, [&](std::string_view item) { return item == *value; })) return &outcome;
  }
  if (auto number = ToNumber(*value)) {
    for (const auto& [key, outcome] : c.table) {
      if (key.find('-', 1) == std::string::npos) continue;
      if (AnyItem(key, [&](std::string_view item) {
            auto range = AsRange(item);
            return range && *number >= range->first && *number <= range->second;
          })) {
        return &outcome;
      }
    }
  }
  return &c.fallback;
}

namespace {

// The index of the '}' closing the section whose "{?" starts at `open`, or
// npos. Inside a section "{{" is a literal brace, "{name}" a capture, "{?"
// a nested section, and every other '}' closes a section: "}}" cannot mean
// a literal brace there, as it must close a capture and a section at once
// in "{? ({err})}" or two sections in "{?a{?{b}}}".
std::size_t SectionEnd(std::string_view summary, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < summary.size(); ++i) {
    const char c = summary[i];
    const char next = i + 1 < summary.size() ? summary[i + 1] : '\0';
    if (c == '}') {
      if (--depth == 0) return i;
    } else if (c == '{' && next == '{') {
      ++i;
    } else if (c == '{' && next == '?') {
      ++depth;
      ++i;
    } else if (c == '{') {
      i = summary.find('}', i + 1);
      if (i == std::string_view::npos) return i;
    }
  }
  return std::string_view::npos;
}

// Reads `summary` once, piece by piece: text(piece) for literal text ("{{"
// and "}}" give one brace, a lone or unclosed brace is text),
// capture(name, at, end) for each "{name}" and section(inner, at, end) for
// each "{?inner}" (not looking into it); `end` is one past the piece. The
// one reading of the template's braces, for interpolation, E105's names and
// W203's empties alike.
template <typename Text, typename Capture, typename Section>
void ForEachPiece(std::string_view summary, Text text, Capture capture, Section section) {
  // The text between braces is one piece (the tainter interpolates every
  // event it checks). The next '{' and '}' from i, each found by memchr
  // (std::string_view::find of a char): libstdc++'s find_first_of calls
  // char_traits::find on the set for every character (about 30
  // instructions each), a byte loop ~5.
  std::size_t i = 0;
  std::size_t open = summary.find('{');
  std::size_t close_brace = summary.find('}');
  while (i < summary.size()) {
    if (open < i) open = summary.find('{', i);
    if (close_brace < i) close_brace = summary.find('}', i);
    const std::size_t brace = std::min({open, close_brace, summary.size()});
    if (brace == summary.size()) {
      text(summary.substr(i));
      return;
    }
    if (brace > i) text(summary.substr(i, brace - i));
    const char c = summary[brace];
    if (brace + 1 < summary.size() && summary[brace + 1] == c) {  // "{{" or "}}"
      text(summary.substr(brace, 1));
      i = brace + 2;
      continue;
    }
    if (c == '{' && brace + 1 < summary.size() && summary[brace + 1] == '?') {
      if (const std::size_t end = SectionEnd(summary, brace); end != std::string_view::npos) {
        section(summary.substr(brace + 2, end - brace - 2), brace, end + 1);
        i = end + 1;
        continue;
      }
    }
    if (c == '{') {
      if (const std::size_t close = summary.find('}', brace + 1); close != std::string_view::npos) {
        capture(summary.substr(brace + 1, close - brace - 1), brace, close + 1);
        i = close + 1;
        continue;
      }
    }
    text(summary.substr(brace, 1));
    i = brace + 1;
  }
}

void IgnoreText(std::string_view /*text*/) {}

// Appends `summary` interpolated to `out`; true when a capture it names
// (outside omitted sections) has a non-empty value.
bool AppendInterpolated(std::string_view summary, const std::map<std::string, std::string>& fields,
                        std::string& out) {
  bool filled = false;
  ForEachPiece(
      summary, [&](std::string_view text) { out.append(text); },
      [&](std::string_view name, std::size_t, std::size_t) {
        auto it = fields.find(std::string(name));
        if (it != fields.end() && !it->second.empty()) {
          out += it->second;
          filled = true;
        }
      },
      [&](std::string_view inner, std::size_t, std::size_t) {
        // Written in place and taken back when none of its captures has a
        // value: no string of its own per section per match.
        const std::size_t before = out.size();
        if (AppendInterpolated(inner, fields, out)) {
          filled = true;
        } else {
          out.resize(before);
        }
      });
  return filled;
}

// The captures AppendInterpolated prints empty, in printed sections too. A
// run of adjacent captures and sections ("{pci}{probe_pci}", one per
// alternative of the pattern) is empty only when all of them are.
void AppendEmptyCaptures(std::string_view summary, const std::map<std::string, std::string>& fields,
                         std::vector<std::string>& empty) {
  std::vector<std::string> run;
  bool run_filled = false;
  std::size_t run_end = std::string_view::npos;
  auto join_run = [&](std::size_t at, std::size_t end) {
    if (at != run_end) {
      if (!run_filled) empty.insert(empty.end(), run.begin(), run.end());
      run.clear();
      run_filled = false;
    }
    run_end = end;
  };
  ForEachPiece(
      summary, IgnoreText,
      [&](std::string_view name, std::size_t at, std::size_t end) {
        join_run(at, end);
        auto it = fields.find(std::string(name));
        if (it != fields.end() && !it->second.empty()) {
          run_filled = true;
        } else {
          run.emplace_back(name);
        }
      },
      [&](std::string_view inner, std::size_t at, std::size_t end) {
        join_run(at, end);
        std::string printed;
        if (AppendInterpolated(inner, fields, printed)) {
          run_filled = true;
          AppendEmptyCaptures(inner, fields, empty);
        }
      });
  join_run(std::string_view::npos, std::string_view::npos);
}

// A summary template read once by ForEachPiece into its pieces, so that a
// match's summary is written piece by piece without reading the template's
// braces again: that reading was ~1,900 instructions a summary on subset-a's
// 10% corpus, where most summaries interpolate captures (8% of the scan's
// instructions; bench/README.md). RunSummary writes AppendInterpolated's
// bytes.
struct SummaryProgram {
  enum class Kind : std::uint8_t { kText, kCapture, kSection };
  struct Piece {
    Kind kind = Kind::kText;
    std::uint32_t at = 0;    // kText: where its bytes are in `text`; kCapture: its index in `names`
    std::uint32_t size = 0;  // kText: how many
    std::uint32_t end = 0;   // kSection: the index of the piece after its last one
  };
  std::string text;  // the template
  std::vector<Piece> pieces;
  std::vector<std::string> names;  // as the map's keys: found without a string built per match
};

// Appends the pieces of `summary` (a view into program.text) to `program`.
void CompileSummary(std::string_view summary, SummaryProgram& program) {
  using Kind = SummaryProgram::Kind;
  ForEachPiece(
      summary,
      [&](std::string_view text) {
        program.pieces.push_back({Kind::kText,
                                  static_cast<std::uint32_t>(text.data() - program.text.data()),
                                  static_cast<std::uint32_t>(text.size()), 0});
      },
      [&](std::string_view name, std::size_t, std::size_t) {
        program.pieces.push_back(
            {Kind::kCapture, static_cast<std::uint32_t>(program.names.size()), 0, 0});
        program.names.emplace_back(name);
      },
      [&](std::string_view inner, std::size_t, std::size_t) {
        const std::size_t at = program.pieces.size();
        program.pieces.push_back({Kind::kSection, 0, 0, 0});
        CompileSummary(inner, program);
        program.pieces[at].end = static_cast<std::uint32_t>(program.pieces.size());
      });
}

// AppendInterpolated(program.text, fields, out) for the pieces [begin, end).
bool RunSummary(const SummaryProgram& program, std::size_t begin, std::size_t end,
                const std::map<std::string, std::string>& fields, std::string& out) {
  using Kind = SummaryProgram::Kind;
  bool filled = false;
  for (std::size_t i = begin; i < end; ++i) {
    const SummaryProgram::Piece& piece = program.pieces[i];
    switch (piece.kind) {
      case Kind::kText:
        out.append(program.text, piece.at, piece.size);
        break;
      case Kind::kCapture: {
        auto it = fields.find(program.names[piece.at]);
        if (it != fields.end() && !it->second.empty()) {
          out += it->second;
          filled = true;
        }
        break;
      }
      case Kind::kSection: {
        const std::size_t before = out.size();
        if (RunSummary(program, i + 1, piece.end, fields, out)) {
          filled = true;
        } else {
          out.resize(before);
        }
        i = piece.end - 1;
        break;
      }
    }
  }
  return filled;
}

// The program of `summary`, compiled on its first use in this thread and
// kept in a slot found by the template's address (a rule set's templates
// live as long as it does), probing 4 of 256; its text is compared before
// use, so a slot taken over by another template, or an address reused,
// costs a compile, never a wrong summary. Per thread: the agent matches on
// several.
const SummaryProgram& ProgramOf(const std::string& summary) {
  struct Slot {
    const char* at = nullptr;
    std::size_t size = 0;
    bool valid = false;
    SummaryProgram program;
  };
  constexpr std::size_t kSlots = 256;
  constexpr std::size_t kProbes = 4;
  thread_local std::unique_ptr<std::array<Slot, kSlots>> slots;
  if (!slots) slots = std::make_unique<std::array<Slot, kSlots>>();
  const auto where = reinterpret_cast<std::uintptr_t>(summary.data()) ^ summary.size();
  const auto home = static_cast<std::size_t>((where * 0x9E3779B97F4A7C15ULL) >> 56);
  Slot* found = nullptr;
  Slot* unused = nullptr;
  for (std::size_t i = 0; i < kProbes && found == nullptr; ++i) {
    Slot& slot = (*slots)[(home + i) % kSlots];
    if (slot.at == summary.data() && slot.size == summary.size()) found = &slot;
    if (unused == nullptr && slot.at == nullptr) unused = &slot;
  }
  Slot& slot = found != nullptr ? *found : unused != nullptr ? *unused : (*slots)[home % kSlots];
  if (!slot.valid || slot.program.text != summary) {
    slot.at = summary.data();
    slot.size = summary.size();
    slot.program.text = summary;
    slot.program.pieces.clear();
    slot.program.names.clear();
    CompileSummary(slot.program.text, slot.program);
    slot.valid = true;
  }
  return slot.program;
}

void AppendCaptureNames(std::string_view summary, std::vector<std::string>& names) {
  ForEachPiece(
      summary, IgnoreText,
      [&](std::string_view name, std::size_t, std::size_t) { names.emplace_back(name); },
      [&](std::string_view inner, std::size_t, std::size_t) { AppendCaptureNames(inner, names); });
}

}  // namespace

namespace {

// ResolveOutcomeTemplate but for m.summary: returns the template that
// applies, a string of `rule` (valid while it is).
const std::string& ResolveAllButSummary(const Rule& rule, RuleMatch& m) {
  m.category = rule.category;
  m.severity = rule.severity;
  m.action = rule.action;
  const std::string* summary = &rule.summary;
  m.threshold = rule.threshold;
  m.expire = rule.expire;
  m.condition = rule.condition;
  m.recover = rule.recover;
  if (rule.classify) {
    const Outcome* o = ClassifyFields(*rule.classify, m.fields);
    Apply(*o, m, summary);
    if (o->classify) Apply(*ClassifyFields(*o->classify, m.fields), m, summary);
  }
  if (summary->empty()) return rule.description.empty() ? rule.id : rule.description;
  return *summary;
}

}  // namespace

void ResolveOutcomeTemplate(const Rule& rule, RuleMatch& m) {
  m.summary = ResolveAllButSummary(rule, m);
}

void ResolveOutcome(const Rule& rule, RuleMatch& m) {
  const std::string& summary = ResolveAllButSummary(rule, m);
  // The summary is written once, from the template: a summary without
  // braces is its own interpolation (most rules'); one with captures is
  // interpolated straight into m.summary. Copying the template first and
  // then interpolating a new string cost two allocations per match: 19.3 M
  // -> 17.5 M instructions on an 8 MB slice of subset-a's 10% corpus.
  if (summary.find('{') != std::string::npos || summary.find('}') != std::string::npos) {
    m.summary.clear();
    m.summary.reserve(summary.size() + 32);
    const SummaryProgram& program = ProgramOf(summary);
    RunSummary(program, 0, program.pieces.size(), m.fields, m.summary);
  } else {
    m.summary = summary;
  }
  // Cut in place: TruncateUtf8 would copy the summary once more per match.
  m.summary.resize(TruncateUtf8View(m.summary, FaultEvent::kMaxSummaryBytes).size());
}

std::string InterpolateSummary(std::string_view summary,
                               const std::map<std::string, std::string>& fields) {
  std::string out;
  out.reserve(summary.size() + 32);
  AppendInterpolated(summary, fields, out);
  return out;
}

std::vector<std::string> EmptySummaryCaptures(std::string_view summary,
                                              const std::map<std::string, std::string>& fields) {
  std::vector<std::string> empty;
  AppendEmptyCaptures(summary, fields, empty);
  return empty;
}

std::vector<std::string> SummaryCaptures(std::string_view summary) {
  std::vector<std::string> names;
  AppendCaptureNames(summary, names);
  return names;
}

}  // namespace faultline
