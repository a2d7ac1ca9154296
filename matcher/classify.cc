// SPDX-License-Identifier: Apache-2.0
#include "matcher/classify.h"

#include <algorithm>
#include <charconv>
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

// The outcome's members into `m`, but its summary into `summary` (a view of
// the rule's; interpolated into m.summary once, at the end).
void Apply(const Outcome& o, RuleMatch& m, std::string_view& summary) {
  if (o.category) m.category = *o.category;
  if (o.severity) m.severity = *o.severity;
  if (o.action) m.action = *o.action;
  if (o.summary) summary = *o.summary;
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

void ResolveOutcome(const Rule& rule, RuleMatch& m) {
  m.category = rule.category;
  m.severity = rule.severity;
  m.action = rule.action;
  std::string_view summary = rule.summary;
  m.threshold = rule.threshold;
  m.expire = rule.expire;
  m.condition = rule.condition;
  m.recover = rule.recover;
  if (rule.classify) {
    const Outcome* o = ClassifyFields(*rule.classify, m.fields);
    Apply(*o, m, summary);
    if (o->classify) Apply(*ClassifyFields(*o->classify, m.fields), m, summary);
  }
  if (summary.empty()) summary = rule.description.empty() ? rule.id : rule.description;
  // Written once: a summary without braces is its own interpolation (most
  // rules' are), and a copy of the template first was an allocation more.
  if (summary.find('{') != std::string_view::npos || summary.find('}') != std::string_view::npos) {
    m.summary = InterpolateSummary(summary, m.fields);
  } else {
    m.summary.assign(summary);
  }
  // Cut in place: TruncateUtf8 would copy the summary once more per match.
  m.summary.resize(TruncateUtf8View(m.summary, FaultEvent::kMaxSummaryBytes).size());
}

std::string InterpolateSummary(std::string_view summary,
                               const std::map<std::string, std::string>& fields) {
  std::string out;
  out.reserve(summary.size() + 32);
  // The text between braces is appended in one piece (the tainter runs this
  // for every event it checks).
  std::size_t i = 0;
  // The next '{' and '}' from i, each found by memchr (std::string_view::find
  // of a char): libstdc++'s find_first_of calls char_traits::find on the set
  // for every character (about 30 instructions each), a byte loop ~5.
  std::size_t open = summary.find('{');
  std::size_t close_brace = summary.find('}');
  while (i < summary.size()) {
    if (open < i) open = summary.find('{', i);
    if (close_brace < i) close_brace = summary.find('}', i);
    const std::size_t brace = std::min({open, close_brace, summary.size()});
    if (brace == summary.size()) {
      out.append(summary.substr(i));
      break;
    }
    out.append(summary.substr(i, brace - i));
    const char c = summary[brace];
    if (brace + 1 < summary.size() && summary[brace + 1] == c) {  // "{{" or "}}"
      out += c;
      i = brace + 2;
      continue;
    }
    if (c == '{') {
      const std::size_t close = summary.find('}', brace + 1);
      if (close != std::string_view::npos) {
        auto it = fields.find(std::string(summary.substr(brace + 1, close - brace - 1)));
        if (it != fields.end()) out += it->second;
        i = close + 1;
        continue;
      }
    }
    out += c;
    i = brace + 1;
  }
  return out;
}

std::vector<std::string> SummaryCaptures(std::string_view summary) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < summary.size(); ++i) {
    char c = summary[i];
    if ((c == '{' || c == '}') && i + 1 < summary.size() && summary[i + 1] == c) {
      ++i;
      continue;
    }
    if (c != '{') continue;
    std::size_t close = summary.find('}', i + 1);
    if (close == std::string_view::npos) break;
    names.emplace_back(summary.substr(i + 1, close - i - 1));
    i = close;
  }
  return names;
}

}  // namespace faultline
