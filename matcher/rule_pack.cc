// SPDX-License-Identifier: Apache-2.0
// Reads a YAML rule pack into Rules, reporting every problem with its place.
// Regex-dependent checks (E104, E105, E111) run in RuleSet::Compile, after
// overrides are merged, because an override may change the pattern.
#include "matcher/rule_pack.h"

#include <algorithm>
#include <optional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "base/suggest.h"
#include "base/time_format.h"
#include "matcher/rule_set.h"

namespace faultline {
namespace {

using Keys = std::vector<std::string_view>;

const Keys kPackKeys = {"pack", "version", "description", "defaults", "rules"};
const Keys kDefaultKeys = {"sources",   "category", "severity", "action",
                           "threshold", "expire",   "condition"};
const Keys kRuleKeys = {"id",        "description", "sources",  "pattern",   "category",
                        "severity",  "action",      "summary",  "threshold", "expire",
                        "classify",  "tests",       "override", "disabled",  "journal",
                        "condition", "peer",        "recover",  "probation", "clear"};
const Keys kOutcomeKeys = {"category", "severity", "action",    "summary", "threshold",
                           "expire",   "classify", "condition", "recover"};
const Keys kClassifyKeys = {"capture", "values", "default"};
const Keys kThresholdKeys = {"count", "window", "key"};
const Keys kTestsKeys = {"match", "no_match"};
const Keys kTestKeys = {"line", "fields", "action", "severity", "origin", "labels"};
const Keys kJournalKeys = {"units", "uids"};
const Keys kSourceNames = {"kernel", "journal", "pod", "ibcounters", "check"};
const Keys kActionNames = {"taint", "event", "ignore"};
const Keys kSeverityNames = {"info", "warning", "error", "critical"};

bool ValidName(std::string_view s, bool allow_dot_underscore) {
  if (s.empty()) return false;
  auto lower_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_digit(s[0])) return false;
  for (char c : s) {
    if (lower_digit(c) || c == '-') continue;
    if (allow_dot_underscore && (c == '.' || c == '_')) continue;
    return false;
  }
  return true;
}

// One YAML map's entries, read once. yaml-cpp's const operator[] walks the
// map decoding each key into a std::string, and for an absent key formats
// the message of an exception it does not throw through a std::stringstream
// (key_to_string, yaml-cpp 0.7): ReadRule's 25 lookups, most of them keys
// the rule does not write, cost 12 M instructions for a 132-rule override
// pack, more than 40% of its parse.
class MapKeys {
 public:
  struct Entry {
    YAML::Node key;
    YAML::Node value;
  };

  // `map` must be a map (callers check IsMap first).
  explicit MapKeys(const YAML::Node& map) {
    entries_.reserve(map.size());
    for (auto it = map.begin(); it != map.end(); ++it) entries_.push_back({it->first, it->second});
  }

  // In the map's order, duplicates and non-scalar keys included.
  const std::vector<Entry>& entries() const { return entries_; }

  // As map[key]: the value of the first entry whose key is the scalar `key`,
  // else an undefined node (false in a condition).
  YAML::Node operator[](std::string_view key) const {
    for (const Entry& e : entries_) {
      if (e.key.IsScalar() && e.key.Scalar() == key) return e.value;
    }
    return Absent();
  }

 private:
  // What yaml-cpp's const operator[] returns for an absent key: an invalid
  // ("zombie") node, made once.
  static const YAML::Node& Absent() {
    static const YAML::Node empty_map(YAML::NodeType::Map);
    static const YAML::Node absent = empty_map["absent"];
    return absent;
  }

  std::vector<Entry> entries_;
};

class PackReader {
 public:
  PackReader(std::string_view file, Diagnostics& diags) : file_(file), diags_(diags) {}

  RulePack Read(std::string_view text) {
    RulePack pack;
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      // yaml-cpp marks are 0-based; -1 when unknown.
      SourceLocation at{file_, e.mark.line >= 0 ? e.mark.line + 1 : 0,
                        e.mark.column >= 0 ? e.mark.column + 1 : 0};
      diags_.Error("E001", at, "yaml syntax error: " + e.msg);
      return pack;
    } catch (const std::exception& e) {
      diags_.Error("E001", {file_, 0, 0}, std::string("yaml syntax error: ") + e.what());
      return pack;
    }
    try {
      ReadPack(root, pack);
    } catch (const std::exception& e) {
      // Not expected: every access below checks types first. Still, never throw.
      diags_.Error("E003", {file_, 0, 0}, std::string("cannot read rule pack: ") + e.what());
    }
    return pack;
  }

 private:
  SourceLocation At(const YAML::Node& node) const {
    const YAML::Mark m = node.Mark();
    return {file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
  }

  // Reports keys of `map` not in `known`, with a hint; returns its entries
  // for the lookups that follow.
  MapKeys CheckKeys(const YAML::Node& map, const Keys& known, std::string_view what) {
    MapKeys keys(map);
    for (const MapKeys::Entry& e : keys.entries()) {
      std::string key = e.key.IsScalar() ? e.key.Scalar() : std::string("?");
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      diags_.Error("E101", At(e.key),
                   "unknown key '" + key + "' in " + std::string(what) + DidYouMean(key, known));
    }
    return keys;
  }

  std::optional<std::string> String(const YAML::Node& node, std::string_view key) {
    if (!node.IsScalar()) {
      diags_.Error("E003", At(node), std::string(key) + " must be a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<bool> Bool(const YAML::Node& node, std::string_view key) {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      if (s == "true" || s == "True" || s == "yes") return true;
      if (s == "false" || s == "False" || s == "no") return false;
    }
    diags_.Error("E003", At(node), std::string(key) + " must be true or false");
    return std::nullopt;
  }

  std::optional<std::int64_t> Integer(const YAML::Node& node, std::string_view key) {
    if (node.IsScalar()) {
      const std::string& s = node.Scalar();
      std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
      bool digits = i < s.size() && s.size() - i <= 12;
      for (std::size_t j = i; j < s.size() && digits; ++j) digits = s[j] >= '0' && s[j] <= '9';
      if (digits) return std::stoll(s);
    }
    diags_.Error("E003", At(node), std::string(key) + " must be an integer");
    return std::nullopt;
  }

  std::optional<std::chrono::seconds> Duration(const YAML::Node& node, std::string_view key) {
    auto text = String(node, key);
    if (!text) return std::nullopt;
    Result<std::chrono::milliseconds> d = ParseDurationOrError(*text);
    if (d.ok() && d->count() > 0) return std::chrono::duration_cast<std::chrono::seconds>(*d);
    if (!d.ok() && d.error().message().find("longer than the maximum") != std::string::npos) {
      diags_.Error(
          "E106", At(node),
          "bad duration for " + std::string(key) + ": " + std::string(d.error().message()));
    } else {
      diags_.Error("E106", At(node),
                   "bad duration '" + *text + "' for " + std::string(key) +
                       " (use e.g. 90s, 10m, 24h, 1h30m, 7d)");
    }
    return std::nullopt;
  }

  template <typename T>
  std::optional<T> Enum(const YAML::Node& node, std::string_view key, const char* code,
                        const Keys& names, std::optional<T> (*parse)(std::string_view)) {
    auto text = String(node, key);
    if (!text) return std::nullopt;
    std::optional<T> value = parse(*text);
    if (!value || std::find(names.begin(), names.end(), *text) == names.end()) {
      diags_.Error(code, At(node),
                   "unknown " + std::string(key) + " '" + *text + "'" + DidYouMean(*text, names));
      return std::nullopt;
    }
    return value;
  }

  // `journal: {units: [nvidia-fabricmanager.service], uids: [0]}`.
  std::optional<JournalConstraint> Journal(const YAML::Node& node) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node),
                   "journal must be a map with units and/or uids, e.g. "
                   "{units: [nvidia-fabricmanager.service], uids: [0]}");
      return std::nullopt;
    }
    const MapKeys keys = CheckKeys(node, kJournalKeys, "journal");
    JournalConstraint c;
    bool ok = true;
    if (YAML::Node units = keys["units"]) {
      if (!units.IsSequence()) {
        diags_.Error("E003", At(units), "journal.units must be a list of systemd unit names");
        ok = false;
      } else {
        for (const YAML::Node& u : units) {
          auto name = String(u, "journal.units[]");
          if (name && name->empty()) diags_.Error("E003", At(u), "journal.units: empty unit name");
          if (!name || name->empty()) {
            ok = false;
            continue;
          }
          c.units.push_back(*name);
        }
      }
    }
    if (YAML::Node uids = keys["uids"]) {
      if (!uids.IsSequence()) {
        diags_.Error("E003", At(uids), "journal.uids must be a list of numeric user ids");
        ok = false;
      } else {
        for (const YAML::Node& u : uids) {
          auto uid = Integer(u, "journal.uids[]");
          if (uid && (*uid < 0 || *uid > 4294967294)) {
            diags_.Error(
                "E003", At(u),
                "journal.uids: " + std::to_string(*uid) + " is not a user id (0 to 4294967294)");
            uid.reset();
          }
          if (!uid) {
            ok = false;
            continue;
          }
          c.uids.push_back(std::to_string(*uid));
        }
      }
    }
    if (ok && c.units.empty() && c.uids.empty()) {
      diags_.Error("E003", At(node), "journal must list units, uids or both");
      return std::nullopt;
    }
    return ok ? std::optional(c) : std::nullopt;
  }

  std::optional<std::vector<Origin>> Sources(const YAML::Node& node) {
    if (!node.IsSequence()) {
      diags_.Error("E003", At(node), "sources must be a list of strings");
      return std::nullopt;
    }
    std::vector<Origin> out;
    bool ok = true;
    for (const YAML::Node& item : node) {
      auto origin = Enum<Origin>(item, "source", "E109", kSourceNames, &ParseOrigin);
      if (!origin) {
        ok = false;
        continue;
      }
      if (std::find(out.begin(), out.end(), *origin) == out.end()) out.push_back(*origin);
    }
    if (ok && out.empty()) {
      diags_.Error("E003", At(node), "sources must list at least one source");
      return std::nullopt;
    }
    return ok ? std::optional(out) : std::nullopt;
  }

  std::optional<EventThreshold> Threshold(const YAML::Node& node) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "threshold must be a map with count, window and key");
      return std::nullopt;
    }
    const MapKeys keys = CheckKeys(node, kThresholdKeys, "threshold");
    EventThreshold t;
    bool ok = true;
    if (YAML::Node count = keys["count"]) {
      auto n = Integer(count, "threshold.count");
      if (!n) {
        ok = false;
      } else if (*n < 1 || *n > 1'000'000) {
        diags_.Error("E113", At(count), "bad threshold: count must be between 1 and 1000000");
        ok = false;
      } else {
        t.count = static_cast<int>(*n);
      }
    } else {
      diags_.Error("E113", At(node), "bad threshold: count is missing");
      ok = false;
    }
    if (YAML::Node window = keys["window"]) {
      auto d = Duration(window, "threshold.window");
      if (d) t.window = *d;
      ok = ok && d.has_value();
    } else {
      diags_.Error("E113", At(node), "bad threshold: window is missing");
      ok = false;
    }
    if (YAML::Node key = keys["key"]; key && !key.IsNull()) {
      if (key.IsScalar()) {
        t.key.push_back(key.Scalar());
      } else if (key.IsSequence()) {
        for (const YAML::Node& k : key) {
          auto name = String(k, "threshold.key entry");
          if (name) t.key.push_back(*name);
          ok = ok && name.has_value();
        }
      } else {
        diags_.Error("E003", At(key), "threshold.key must be a list of capture names");
        ok = false;
      }
    }
    return ok ? std::optional(t) : std::nullopt;
  }

  // Validates a classify value key: "79", "13,31,43", "144-150".
  void CheckValueKey(const YAML::Node& key_node) {
    const std::string key = key_node.IsScalar() ? key_node.Scalar() : std::string();
    auto bad = [&](const std::string& why) {
      diags_.Error("E112", At(key_node), "bad classify value '" + key + "': " + why);
    };
    if (!key_node.IsScalar() || key.empty()) return bad("empty");
    std::size_t start = 0;
    while (start <= key.size()) {
      std::size_t comma = key.find(',', start);
      std::string part =
          key.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      while (!part.empty() && part.front() == ' ') part.erase(0, 1);
      while (!part.empty() && part.back() == ' ') part.pop_back();
      if (part.empty()) return bad("empty entry in a comma list");
      // "144-150" is a range; "Non-fatal" or "nvidia-fabricmanager" is an
      // exact value. Only a part that starts with a number reads as a range.
      std::size_t dash = part.find('-', 1);
      auto numeric = [](const std::string& s) {
        return !s.empty() && s.size() <= 18 &&
               std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
      };
      if (dash != std::string::npos && numeric(part.substr(0, dash))) {
        std::string lo = part.substr(0, dash), hi = part.substr(dash + 1);
        if (!numeric(hi)) return bad("a range needs two non-negative integers");
        if (std::stoll(lo) > std::stoll(hi)) return bad("range start is above its end");
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  // `condition:`: a NodeCondition type faultline sets on the node (status
  // True while the fault is active). CamelCase like every Kubernetes
  // condition type; the kubelet's own types are refused, since faultline
  // writing Ready or MemoryPressure would fight the kubelet.
  std::optional<std::string> Condition(const YAML::Node& node) {
    std::optional<std::string> s = String(node, "condition");
    if (!s) return std::nullopt;
    const bool camel =
        !s->empty() && s->size() <= 63 && (*s)[0] >= 'A' && (*s)[0] <= 'Z' &&
        std::all_of(s->begin(), s->end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        });
    if (!camel) {
      diags_.Error("E115", At(node),
                   "bad condition type '" + *s +
                       "': use CamelCase letters and digits, e.g. GPUFault (at most 63)");
      return std::nullopt;
    }
    for (std::string_view kubelet :
         {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}) {
      if (*s == kubelet) {
        diags_.Error("E115", At(node),
                     "bad condition type '" + *s +
                         "': the kubelet owns it; faultline would fight "
                         "the kubelet over it");
        return std::nullopt;
      }
    }
    return s;
  }

  // `recover: reboot`, `probation: 10m` and `clear: [rule ids]`: how a
  // rule's fault ends, and which faults a recovery line ends
  // (tainter/core/recovery.h). E116: a bad recover or probation; E117: a bad
  // clear (an unknown form, a bad id, or a clear rule that would taint).
  // A `recover:` value (a rule's or a classify outcome's); E116 if bad.
  std::optional<std::string> Recover(const YAML::Node& n) {
    std::optional<std::string> s = String(n, "recover");
    if (s && *s != "reboot") {
      diags_.Error("E116", At(n), "bad recover '" + *s + "': the one way is 'reboot'");
      return std::nullopt;
    }
    return s;
  }

  void ReadRecovery(const MapKeys& keys, Rule& r) {
    if (YAML::Node n = keys["recover"]) r.recover = Recover(n).value_or("");
    if (YAML::Node n = keys["probation"]) {
      r.probation = Duration(n, "probation");
      if (r.recover.empty() && !keys["recover"]) {
        diags_.Error("E116", At(n), "probation without 'recover: reboot' in rule '" + r.id + "'");
      }
    }
    if (YAML::Node n = keys["clear"]) {
      std::vector<YAML::Node> items;
      if (n.IsScalar()) {
        items.push_back(n);
      } else if (n.IsSequence() && n.size() > 0) {
        for (const YAML::Node& item : n) items.push_back(item);
      } else {
        diags_.Error("E117", At(n), "clear must be a rule id or a non-empty list of rule ids");
      }
      for (const YAML::Node& item : items) {
        std::optional<std::string> id = item.IsScalar() ? String(item, "clear") : std::nullopt;
        if (!id || !ValidName(*id, true)) {
          diags_.Error("E117", At(item),
                       "bad rule id in clear: use lower-case letters, digits, '.', '_', '-'");
          continue;
        }
        if (*id == r.id) {
          diags_.Error("E117", At(item), "rule '" + r.id + "' cannot clear itself");
          continue;
        }
        r.clears.push_back(*id);
      }
      if (r.action == Action::kTaint) {
        diags_.Error("E117", At(n),
                     "rule '" + r.id + "' clears faults, so it cannot taint (use action: event)");
      }
      if (!r.recover.empty()) {
        diags_.Error("E117", At(n),
                     "rule '" + r.id + "' clears faults, so it has no fault to recover from");
      }
    }
  }

  // Reads outcome keys present in `node` into `out`. `allow_classify`: the
  // nesting depth left for a classify inside this outcome.
  void ReadOutcome(const YAML::Node& node, Outcome& out, int classify_depth) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "a classify outcome must be a map");
      return;
    }
    const MapKeys keys = CheckKeys(node, kOutcomeKeys, "classify outcome");
    if (YAML::Node n = keys["category"]) out.category = String(n, "category");
    if (YAML::Node n = keys["severity"]) {
      out.severity = Enum<Severity>(n, "severity", "E108", kSeverityNames, &ParseSeverity);
    }
    if (YAML::Node n = keys["action"]) {
      out.action = Enum<Action>(n, "action", "E107", kActionNames, &ParseAction);
    }
    if (YAML::Node n = keys["summary"]) out.summary = String(n, "summary");
    if (YAML::Node n = keys["threshold"]) out.threshold = Threshold(n);
    if (YAML::Node n = keys["expire"]) out.expire = Duration(n, "expire");
    if (YAML::Node n = keys["condition"]) out.condition = Condition(n);
    if (YAML::Node n = keys["recover"]) out.recover = Recover(n);
    if (YAML::Node n = keys["classify"]) {
      if (classify_depth <= 0) {
        diags_.Error("E003", At(n), "classify may nest only one level deep");
      } else if (auto c = ReadClassify(n, classify_depth - 1)) {
        out.classify = std::make_shared<const Classification>(std::move(*c));
      }
    }
  }

  std::optional<Classification> ReadClassify(const YAML::Node& node, int depth) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "classify must be a map with capture, values and default");
      return std::nullopt;
    }
    const MapKeys keys = CheckKeys(node, kClassifyKeys, "classify");
    Classification c;
    c.at = At(node);
    if (YAML::Node n = keys["capture"]) {
      if (auto s = String(n, "classify.capture")) c.capture = *s;
      c.at = At(n);
    }
    if (YAML::Node values = keys["values"]) {
      if (!values.IsMap()) {
        diags_.Error("E003", At(values), "classify.values must be a map from value to outcome");
      } else {
        for (auto it = values.begin(); it != values.end(); ++it) {
          CheckValueKey(it->first);
          Outcome o;
          ReadOutcome(it->second, o, depth);
          c.table[it->first.IsScalar() ? it->first.Scalar() : std::string()] = std::move(o);
        }
      }
    }
    if (YAML::Node d = keys["default"]) ReadOutcome(d, c.fallback, depth);
    return c;
  }

  std::optional<RuleTest> ReadTest(const YAML::Node& node, bool is_match) {
    RuleTest t;
    t.at = At(node);
    if (node.IsScalar()) {
      t.line = node.Scalar();
      return t;
    }
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "a test must be a string or a map with line");
      return std::nullopt;
    }
    const MapKeys keys = CheckKeys(node, kTestKeys, "test");
    YAML::Node line = keys["line"];
    if (!line) {
      diags_.Error("E102", At(node), "missing required key 'line' in test");
      return std::nullopt;
    }
    auto text = String(line, "line");
    if (!text) return std::nullopt;
    t.line = *text;
    if (YAML::Node f = keys["fields"]) {
      if (!is_match) {
        diags_.Error("E003", At(f), "fields are only checked in match tests");
      } else if (!f.IsMap()) {
        diags_.Error("E003", At(f), "fields must be a map from capture name to value");
      } else {
        for (auto it = f.begin(); it != f.end(); ++it) {
          auto k = String(it->first, "field name");
          auto v = String(it->second, "field value");
          if (k && v) t.fields[*k] = *v;
        }
      }
    }
    if (YAML::Node n = keys["action"]) {
      t.action = Enum<Action>(n, "action", "E107", kActionNames, &ParseAction);
    }
    if (YAML::Node n = keys["severity"]) {
      t.severity = Enum<Severity>(n, "severity", "E108", kSeverityNames, &ParseSeverity);
    }
    if (YAML::Node n = keys["origin"]) {
      Keys origins = kSourceNames;
      origins.push_back("any");
      t.origin = Enum<Origin>(n, "origin", "E109", origins, &ParseOrigin);
    }
    if (YAML::Node l = keys["labels"]) {
      if (!l.IsMap()) {
        diags_.Error("E003", At(l), "labels must be a map, e.g. {unit: x.service, uid: '0'}");
      } else {
        for (auto it = l.begin(); it != l.end(); ++it) {
          auto k = String(it->first, "label name");
          auto v = String(it->second, "label value");
          if (k && v) t.labels[*k] = *v;
        }
      }
    }
    return t;
  }

  void ReadTests(const YAML::Node& node, Rule& rule) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "tests must be a map with match and no_match");
      return;
    }
    const MapKeys keys = CheckKeys(node, kTestsKeys, "tests");
    for (bool is_match : {true, false}) {
      YAML::Node list = node[is_match ? "match" : "no_match"];
      if (!list || list.IsNull()) continue;
      if (!list.IsSequence()) {
        diags_.Error("E003", At(list),
                     std::string(is_match ? "match" : "no_match") + " must be a list of tests");
        continue;
      }
      for (const YAML::Node& item : list) {
        if (auto t = ReadTest(item, is_match)) {
          (is_match ? rule.match_tests : rule.no_match_tests).push_back(std::move(*t));
        }
      }
    }
  }

  struct Defaults {
    std::optional<std::vector<Origin>> sources;
    std::optional<std::string> category;
    std::optional<Severity> severity;
    std::optional<Action> action;
    std::optional<EventThreshold> threshold;
    std::optional<std::chrono::seconds> expire;
    std::optional<std::string> condition;
  };

  Defaults ReadDefaults(const YAML::Node& node) {
    Defaults d;
    if (!node.IsMap()) {
      if (!node.IsNull()) diags_.Error("E003", At(node), "defaults must be a map");
      return d;
    }
    const MapKeys keys = CheckKeys(node, kDefaultKeys, "defaults");
    if (YAML::Node n = keys["sources"]) d.sources = Sources(n);
    if (YAML::Node n = keys["category"]) d.category = String(n, "category");
    if (YAML::Node n = keys["severity"]) {
      d.severity = Enum<Severity>(n, "severity", "E108", kSeverityNames, &ParseSeverity);
    }
    if (YAML::Node n = keys["action"]) {
      d.action = Enum<Action>(n, "action", "E107", kActionNames, &ParseAction);
    }
    if (YAML::Node n = keys["threshold"]) d.threshold = Threshold(n);
    if (YAML::Node n = keys["expire"]) d.expire = Duration(n, "expire");
    if (YAML::Node n = keys["condition"]) d.condition = Condition(n);
    return d;
  }

  std::optional<Rule> ReadRule(const YAML::Node& node, const std::string& pack,
                               const Defaults& defaults) {
    if (!node.IsMap()) {
      diags_.Error("E003", At(node), "a rule must be a map");
      return std::nullopt;
    }
    Rule r;
    r.pack = pack;
    r.defined_at = At(node);
    const MapKeys keys = CheckKeys(node, kRuleKeys, "rule");
    for (const MapKeys::Entry& e : keys.entries()) {
      if (e.key.IsScalar()) r.keys_at[e.key.Scalar()] = At(e.value);
    }
    if (YAML::Node n = keys["override"]) r.is_override = Bool(n, "override").value_or(false);
    if (YAML::Node n = keys["disabled"]) r.disabled = Bool(n, "disabled").value_or(false);
    if (YAML::Node n = keys["id"]) {
      r.defined_at = At(n);
      if (auto s = String(n, "id")) {
        r.id = *s;
        if (!ValidName(r.id, true)) {
          diags_.Error("E114", At(n),
                       "bad rule id '" + r.id + "': use lower-case letters, digits, '.', '_', '-'");
        }
      }
    } else {
      diags_.Error("E102", At(node), "missing required key 'id'");
    }
    if (YAML::Node n = keys["description"]) {
      if (auto s = String(n, "description")) r.description = *s;
    }
    if (YAML::Node n = keys["pattern"]) {
      r.pattern_at = At(n);
      if (auto s = String(n, "pattern")) r.pattern = *s;
    } else if (!r.is_override) {
      diags_.Error("E102", r.defined_at, "missing required key 'pattern' in rule '" + r.id + "'");
    }
    if (YAML::Node n = keys["sources"]) {
      if (auto s = Sources(n)) r.sources = *s;
    } else if (!r.is_override) {
      if (defaults.sources) {
        r.sources = *defaults.sources;
      } else {
        diags_.Error("E102", r.defined_at,
                     "missing required key 'sources' in rule '" + r.id + "' (or in defaults)");
      }
    }
    if (YAML::Node n = keys["category"]) {
      r.category = String(n, "category").value_or("");
    } else if (!r.is_override && defaults.category) {
      r.category = *defaults.category;
    }
    if (YAML::Node n = keys["severity"]) {
      r.severity = Enum<Severity>(n, "severity", "E108", kSeverityNames, &ParseSeverity)
                       .value_or(Severity::kWarning);
    } else if (!r.is_override && defaults.severity) {
      r.severity = *defaults.severity;
    }
    if (YAML::Node n = keys["action"]) {
      r.action =
          Enum<Action>(n, "action", "E107", kActionNames, &ParseAction).value_or(Action::kEvent);
    } else if (!r.is_override && defaults.action) {
      r.action = *defaults.action;
    }
    if (YAML::Node n = keys["summary"]) r.summary = String(n, "summary").value_or("");
    if (YAML::Node n = keys["threshold"]) {
      if (!n.IsNull()) r.threshold = Threshold(n);
    } else if (!r.is_override) {
      r.threshold = defaults.threshold;
    }
    if (YAML::Node n = keys["expire"]) {
      r.expire = Duration(n, "expire");
    } else if (!r.is_override) {
      r.expire = defaults.expire;
    }
    if (YAML::Node n = keys["peer"]) r.peer = String(n, "peer").value_or("");
    if (YAML::Node n = keys["condition"]) {
      r.condition = Condition(n).value_or("");
    } else if (!r.is_override && defaults.condition) {
      r.condition = *defaults.condition;
    }
    if (YAML::Node n = keys["classify"]) r.classify = ReadClassify(n, 1);
    ReadRecovery(keys, r);
    if (YAML::Node n = keys["journal"]) {
      r.journal = Journal(n);
      const bool trusts_journal =
          std::find(r.sources.begin(), r.sources.end(), Origin::kJournal) != r.sources.end();
      if (r.journal && !r.sources.empty() && !trusts_journal) {
        diags_.Error("E003", At(n),
                     "journal constrains journal records, but rule '" + r.id +
                         "' does not list journal in its sources");
      }
    }
    if (YAML::Node n = keys["tests"]) ReadTests(n, r);
    return r;
  }

  void ReadPack(const YAML::Node& root, RulePack& pack) {
    if (!root.IsMap()) {
      diags_.Error("E003",
                   root.IsDefined() && !root.IsNull() ? At(root) : SourceLocation{file_, 1, 1},
                   "a rule pack must be a map with pack, version and rules");
      return;
    }
    const MapKeys keys = CheckKeys(root, kPackKeys, "rule pack");
    if (YAML::Node n = keys["pack"]) {
      pack.name_at = At(n);
      if (auto s = String(n, "pack")) {
        pack.name = *s;
        if (!ValidName(pack.name, false)) {
          diags_.Error("E114", At(n),
                       "bad pack name '" + pack.name + "': use lower-case letters, digits and '-'");
        }
      }
    } else {
      diags_.Error("E102", {file_, 1, 1}, "missing required key 'pack'");
    }
    if (YAML::Node n = keys["version"]) {
      auto v = Integer(n, "version");
      if (v && *v < 1) diags_.Error("E003", At(n), "version must be a positive integer");
      if (v) pack.version = static_cast<int>(*v);
    } else {
      diags_.Error("E102", {file_, 1, 1}, "missing required key 'version'");
    }
    if (YAML::Node n = keys["description"]) {
      pack.description = String(n, "description").value_or("");
    }
    Defaults defaults;
    if (YAML::Node n = keys["defaults"]) defaults = ReadDefaults(n);
    YAML::Node rules = keys["rules"];
    if (!rules || rules.IsNull()) return;  // a pack may hold no rules yet
    if (!rules.IsSequence()) {
      diags_.Error("E003", At(rules), "rules must be a list of rules");
      return;
    }
    // Duplicate ids are found by MergeRulePacks, across this pack and others.
    for (const YAML::Node& item : rules) {
      std::optional<Rule> r = ReadRule(item, pack.name, defaults);
      if (!r) continue;
      pack.rules.push_back(std::move(*r));
    }
  }

  std::string file_;
  Diagnostics& diags_;
};

}  // namespace

const std::vector<std::string_view>& RuleKeys() { return kRuleKeys; }

RulePack ParseRulePack(std::string_view yaml_text, std::string_view file_name, Diagnostics& diags) {
  return PackReader(file_name, diags).Read(yaml_text);
}

std::vector<Rule> LoadRulePack(std::string_view yaml_text, std::string_view file_name,
                               Diagnostics& diags) {
  return ParseRulePack(yaml_text, file_name, diags).rules;
}

}  // namespace faultline
