// SPDX-License-Identifier: Apache-2.0
#include "matcher/rule_snapshot.h"

#include <cstdint>
#include <memory>

#include "matcher/snapshot_bytes.h"

namespace faultline {
namespace {

// Bumped whenever a field is added to Rule, Outcome, ... and written here: a
// snapshot of another layout is refused, never misread.
constexpr std::uint32_t kLayout = 0x464c5201;  // "FLR" 1

class Writer : public ByteWriter {
 public:
  template <typename T, typename F>
  void Opt(const std::optional<T>& v, F write) {
    Bool(v.has_value());
    if (v) write(*v);
  }
  void Strings(const std::vector<std::string>& v) {
    U32(static_cast<std::uint32_t>(v.size()));
    for (const std::string& s : v) Str(s);
  }
  void StringMap(const std::map<std::string, std::string>& m) {
    U32(static_cast<std::uint32_t>(m.size()));
    for (const auto& [k, v] : m) {
      Str(k);
      Str(v);
    }
  }
  void Location(const SourceLocation& l) {
    Str(l.file);
    U32(static_cast<std::uint32_t>(l.line));
    U32(static_cast<std::uint32_t>(l.column));
  }
  void Threshold(const EventThreshold& t) {
    U32(static_cast<std::uint32_t>(t.count));
    I64(t.window.count());
    Strings(t.key);
  }
  void Seconds(std::chrono::seconds s) { I64(s.count()); }

  void OutcomeOf(const Outcome& o) {
    Opt(o.category, [&](const std::string& s) { Str(s); });
    Opt(o.severity, [&](Severity s) { U32(static_cast<std::uint32_t>(s)); });
    Opt(o.action, [&](Action a) { U32(static_cast<std::uint32_t>(a)); });
    Opt(o.summary, [&](const std::string& s) { Str(s); });
    Opt(o.threshold, [&](const EventThreshold& t) { Threshold(t); });
    Opt(o.expire, [&](std::chrono::seconds s) { Seconds(s); });
    Opt(o.condition, [&](const std::string& s) { Str(s); });
    Opt(o.recover, [&](const std::string& s) { Str(s); });
    Bool(o.classify != nullptr);
    if (o.classify) ClassificationOf(*o.classify);
  }
  void ClassificationOf(const Classification& c) {
    Str(c.capture);
    U32(static_cast<std::uint32_t>(c.table.size()));
    for (const auto& [value, outcome] : c.table) {
      Str(value);
      OutcomeOf(outcome);
    }
    OutcomeOf(c.fallback);
    Location(c.at);
  }
  void Test(const RuleTest& t) {
    Str(t.line);
    StringMap(t.fields);
    Opt(t.origin, [&](Origin o) { U32(static_cast<std::uint32_t>(o)); });
    StringMap(t.labels);
    Opt(t.action, [&](Action a) { U32(static_cast<std::uint32_t>(a)); });
    Opt(t.severity, [&](Severity s) { U32(static_cast<std::uint32_t>(s)); });
    Location(t.at);
  }
  void Tests(const std::vector<RuleTest>& tests) {
    U32(static_cast<std::uint32_t>(tests.size()));
    for (const RuleTest& t : tests) Test(t);
  }
  void RuleOf(const Rule& r) {
    Str(r.id);
    Str(r.pack);
    Str(r.description);
    U32(static_cast<std::uint32_t>(r.sources.size()));
    for (Origin o : r.sources) U32(static_cast<std::uint32_t>(o));
    Str(r.pattern);
    Str(r.category);
    U32(static_cast<std::uint32_t>(r.severity));
    U32(static_cast<std::uint32_t>(r.action));
    Str(r.summary);
    Opt(r.threshold, [&](const EventThreshold& t) { Threshold(t); });
    Opt(r.expire, [&](std::chrono::seconds s) { Seconds(s); });
    Str(r.condition);
    Opt(r.classify, [&](const Classification& c) { ClassificationOf(c); });
    Opt(r.journal, [&](const JournalConstraint& j) {
      Strings(j.units);
      Strings(j.uids);
    });
    Str(r.peer);
    Str(r.recover);
    Opt(r.probation, [&](std::chrono::seconds s) { Seconds(s); });
    Strings(r.clears);
    Tests(r.match_tests);
    Tests(r.no_match_tests);
    Bool(r.disabled);
    Bool(r.is_override);
    Location(r.defined_at);
    Location(r.pattern_at);
    U32(static_cast<std::uint32_t>(r.keys_at.size()));
    for (const auto& [key, at] : r.keys_at) {
      Str(key);
      Location(at);
    }
  }
};

class Reader : public ByteReader {
 public:
  using ByteReader::ByteReader;

  template <typename E>
  E Enum(std::uint32_t last) {
    const std::uint32_t v = U32();
    if (v > last) Fail();
    return static_cast<E>(ok() ? v : 0);
  }
  template <typename T, typename F>
  std::optional<T> Opt(F read) {
    if (!Bool() || !ok()) return std::nullopt;
    return read();
  }
  std::vector<std::string> Strings() {
    std::vector<std::string> v(Count());
    for (std::string& s : v) s = Str();
    return v;
  }
  std::map<std::string, std::string> StringMap() {
    std::map<std::string, std::string> m;
    for (std::uint32_t n = Count(); n > 0 && ok(); --n) {
      std::string k = Str();
      m[std::move(k)] = Str();
    }
    return m;
  }
  SourceLocation Location() {
    SourceLocation l;
    l.file = Str();
    l.line = static_cast<int>(U32());
    l.column = static_cast<int>(U32());
    return l;
  }
  EventThreshold Threshold() {
    EventThreshold t;
    t.count = static_cast<int>(U32());
    t.window = std::chrono::seconds(I64());
    t.key = Strings();
    return t;
  }
  Severity SeverityOf() { return Enum<Severity>(static_cast<std::uint32_t>(Severity::kCritical)); }
  Action ActionOf() { return Enum<Action>(static_cast<std::uint32_t>(Action::kTaint)); }
  Origin OriginOf() { return Enum<Origin>(static_cast<std::uint32_t>(Origin::kAny)); }

  Outcome OutcomeOf(int depth) {
    Outcome o;
    o.category = Opt<std::string>([&] { return Str(); });
    o.severity = Opt<Severity>([&] { return SeverityOf(); });
    o.action = Opt<Action>([&] { return ActionOf(); });
    o.summary = Opt<std::string>([&] { return Str(); });
    o.threshold = Opt<EventThreshold>([&] { return Threshold(); });
    o.expire = Opt<std::chrono::seconds>([&] { return std::chrono::seconds(I64()); });
    o.condition = Opt<std::string>([&] { return Str(); });
    o.recover = Opt<std::string>([&] { return Str(); });
    if (Bool() && ok()) {
      if (depth >= 2) {  // packs nest one classify in an outcome, no deeper
        Fail();
        return o;
      }
      o.classify = std::make_shared<const Classification>(ClassificationOf(depth + 1));
    }
    return o;
  }
  Classification ClassificationOf(int depth) {
    Classification c;
    c.capture = Str();
    for (std::uint32_t n = Count(); n > 0 && ok(); --n) {
      std::string value = Str();
      c.table[std::move(value)] = OutcomeOf(depth);
    }
    c.fallback = OutcomeOf(depth);
    c.at = Location();
    return c;
  }
  std::vector<RuleTest> Tests() {
    std::vector<RuleTest> tests(Count());
    for (RuleTest& t : tests) {
      t.line = Str();
      t.fields = StringMap();
      t.origin = Opt<Origin>([&] { return OriginOf(); });
      t.labels = StringMap();
      t.action = Opt<Action>([&] { return ActionOf(); });
      t.severity = Opt<Severity>([&] { return SeverityOf(); });
      t.at = Location();
    }
    return tests;
  }
  Rule RuleOf() {
    Rule r;
    r.id = Str();
    r.pack = Str();
    r.description = Str();
    r.sources.resize(Count());
    for (Origin& o : r.sources) o = OriginOf();
    r.pattern = Str();
    r.category = Str();
    r.severity = SeverityOf();
    r.action = ActionOf();
    r.summary = Str();
    r.threshold = Opt<EventThreshold>([&] { return Threshold(); });
    r.expire = Opt<std::chrono::seconds>([&] { return std::chrono::seconds(I64()); });
    r.condition = Str();
    r.classify = Opt<Classification>([&] { return ClassificationOf(1); });
    r.journal = Opt<JournalConstraint>([&] {
      JournalConstraint j;
      j.units = Strings();
      j.uids = Strings();
      return j;
    });
    r.peer = Str();
    r.recover = Str();
    r.probation = Opt<std::chrono::seconds>([&] { return std::chrono::seconds(I64()); });
    r.clears = Strings();
    r.match_tests = Tests();
    r.no_match_tests = Tests();
    r.disabled = Bool();
    r.is_override = Bool();
    r.defined_at = Location();
    r.pattern_at = Location();
    for (std::uint32_t n = Count(); n > 0 && ok(); --n) {
      std::string key = Str();
      r.keys_at[std::move(key)] = Location();
    }
    return r;
  }
};

}  // namespace

std::string SerializeParsedPack(const ParsedPack& parsed) {
  Writer w;
  w.U32(kLayout);
  const RulePack& p = parsed.pack;
  w.Str(p.name);
  w.U32(static_cast<std::uint32_t>(p.version));
  w.Str(p.description);
  w.Location(p.name_at);
  w.U32(static_cast<std::uint32_t>(p.rules.size()));
  for (const Rule& r : p.rules) w.RuleOf(r);
  const std::vector<Diagnostic>& all = parsed.diags.all();
  w.U32(static_cast<std::uint32_t>(all.size()));
  for (const Diagnostic& d : all) {
    w.Bool(d.level == Diagnostic::Level::kWarning);
    w.Str(d.code);
    w.Location(d.where);
    w.Str(d.message);
  }
  return std::move(w.out);
}

std::optional<ParsedPack> DeserializeParsedPack(std::string_view bytes) {
  Reader r(bytes);
  if (r.U32() != kLayout || !r.ok()) return std::nullopt;
  ParsedPack parsed;
  RulePack& p = parsed.pack;
  p.name = r.Str();
  p.version = static_cast<int>(r.U32());
  p.description = r.Str();
  p.name_at = r.Location();
  p.rules.resize(r.Count());
  for (Rule& rule : p.rules) {
    if (!r.ok()) break;
    rule = r.RuleOf();
  }
  for (std::uint32_t n = r.Count(); n > 0 && r.ok(); --n) {
    const bool warning = r.Bool();
    std::string code = r.Str();
    SourceLocation where = r.Location();
    std::string message = r.Str();
    if (warning) {
      parsed.diags.Warning(std::move(code), std::move(where), std::move(message));
    } else {
      parsed.diags.Error(std::move(code), std::move(where), std::move(message));
    }
  }
  if (!r.done()) return std::nullopt;
  return parsed;
}

ParsedPack ReadBuiltinPack(const RulePackText& builtin) {
  if (!builtin.snapshot.empty()) {
    if (std::optional<ParsedPack> parsed = DeserializeParsedPack(builtin.snapshot)) {
      return std::move(*parsed);
    }
  }
  ParsedPack parsed;
  parsed.pack = ParseRulePack(builtin.text, builtin.file, parsed.diags);
  return parsed;
}

}  // namespace faultline
