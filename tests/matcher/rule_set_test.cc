// SPDX-License-Identifier: Apache-2.0
// The compiled RuleSet: captures, classification, overrides, origins, reload.
#include <thread>

#include <doctest/doctest.h>

#include "matcher/classify.h"
#include "matcher/rule_set_testing.h"
#include "tests/matcher/rule_test_util.h"

namespace faultline {
namespace {

const char* const kXidPack = R"(pack: xid
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: nvidia.xid
    pattern: 'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)(?:, (?P<kind>Fatal|Nonfatal))?'
    severity: warning
    action: event
    summary: 'Xid {xid} on {pci}'
    threshold: {count: 3, window: 1h, key: [pci]}
    classify:
      capture: xid
      values:
        "79": {severity: critical, action: taint, summary: 'Xid 79 on {pci}: fell off the bus', expire: 2h}
        "13,31,43": {category: application}
        "60-70": {severity: error}
        "144-150":
          category: nvlink
          classify:
            capture: kind
            values:
              Fatal: {severity: critical, action: taint}
            default: {severity: info}
      default: {summary: 'unknown Xid {xid} on {pci}'}
  - id: gpu.any-nvrm
    pattern: 'NVRM: '
    sources: [kernel, pod]
    category: informational
    severity: info
    action: ignore
)";

TEST_CASE("a match carries its named captures, unset optional groups are absent") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  auto m = MatchLine(*l.set, "[  12.3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234", Origin::kKernel);
  REQUIRE(m.size() == 2);
  CHECK(m[0].rule->id == "nvidia.xid");
  CHECK(m[0].fields == std::map<std::string, std::string>{{"pci", "0000:3b:00"}, {"xid", "79"}});
  CHECK(m[1].rule->id == "gpu.any-nvrm");
  CHECK(m[1].fields.empty());
}

TEST_CASE("a line matching several rules reports every one, in load order") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  auto m = MatchLine(*l.set, "NVRM: Xid (0000:03:00): 13, Graphics Exception", Origin::kAny);
  REQUIRE(m.size() == 2);
  CHECK(m[0].rule->id == "nvidia.xid");
  CHECK(m[1].rule->id == "gpu.any-nvrm");
  CHECK(m[1].action == Action::kIgnore);
}

TEST_CASE("classification: exact, comma list, range, nested, default, and rule keys beneath") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  auto first = [&](const std::string& line) {
    auto m = MatchLine(*l.set, line, Origin::kKernel);
    REQUIRE(!m.empty());
    return m[0];
  };
  RuleMatch x79 = first("NVRM: Xid (PCI:0000:3b:00): 79, pid=1");
  CHECK(x79.severity == Severity::kCritical);
  CHECK(x79.action == Action::kTaint);
  CHECK(x79.category == "hardware");
  CHECK(x79.summary == "Xid 79 on 0000:3b:00: fell off the bus");
  CHECK(x79.expire == std::chrono::seconds(7200));
  REQUIRE(x79.threshold);
  CHECK(x79.threshold->count == 3);
  CHECK(x79.threshold->key == std::vector<std::string>{"pci"});

  RuleMatch x31 = first("NVRM: Xid (PCI:0000:3b:00): 31, pid=1");
  CHECK(x31.category == "application");
  CHECK(x31.action == Action::kEvent);
  CHECK(x31.summary == "Xid 31 on 0000:3b:00");

  CHECK(first("NVRM: Xid (PCI:0000:3b:00): 63, x").severity == Severity::kError);
  CHECK(first("NVRM: Xid (PCI:0000:3b:00): 60, x").severity == Severity::kError);
  CHECK(first("NVRM: Xid (PCI:0000:3b:00): 70, x").severity == Severity::kError);
  CHECK(first("NVRM: Xid (PCI:0000:3b:00): 71, x").severity == Severity::kWarning);

  RuleMatch fatal = first("NVRM: Xid (PCI:0000:3b:00): 145, Fatal");
  CHECK(fatal.category == "nvlink");
  CHECK(fatal.action == Action::kTaint);
  CHECK(fatal.severity == Severity::kCritical);
  RuleMatch nonfatal = first("NVRM: Xid (PCI:0000:3b:00): 145, Nonfatal");
  CHECK(nonfatal.action == Action::kEvent);
  CHECK(nonfatal.severity == Severity::kInfo);
  RuleMatch no_kind = first("NVRM: Xid (PCI:0000:3b:00): 150, pid=1");  // capture absent: default
  CHECK(no_kind.severity == Severity::kInfo);

  RuleMatch unknown = first("NVRM: Xid (PCI:0000:3b:00): 999, x");
  CHECK(unknown.summary == "unknown Xid 999 on 0000:3b:00");
  CHECK(unknown.action == Action::kEvent);
}

TEST_CASE("origin filtering: a kernel-only rule does not match a pod record") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  const char* line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1";
  auto pod = MatchLine(*l.set, line, Origin::kPod);
  REQUIRE(pod.size() == 1);
  CHECK(pod[0].rule->id == "gpu.any-nvrm");
  CHECK(MatchLine(*l.set, line, Origin::kJournal).empty());
  CHECK(MatchLine(*l.set, line, Origin::kAny).size() == 2);
  LogRecord record;
  record.origin = Origin::kPod;
  record.text = line;
  std::vector<RuleMatch> out;
  l.set->Match(record, out);
  CHECK(out.size() == 1);
}

TEST_CASE("summary interpolation handles doubled braces and absent captures") {
  std::map<std::string, std::string> f{{"a", "1"}};
  CHECK(InterpolateSummary("{{a}} is {a}, b is '{b}'", f) == "{a} is 1, b is ''");
  CHECK(SummaryCaptures("{{x}} {y} {z}") == std::vector<std::string>{"y", "z"});
}

TEST_CASE("an optional summary section is kept only when one of its captures has a value") {
  // Users read summaries on the node; a line without the optional part must
  // not leave "failed ()" or "GPU  fell off" behind.
  const std::string t = "GPU{? {pci}} reset failed{? ({err}{ret})}; drain";
  CHECK(InterpolateSummary(t, {{"pci", "0000:3b:00.0"}, {"err", "-110"}}) ==
        "GPU 0000:3b:00.0 reset failed (-110); drain");
  CHECK(InterpolateSummary(t, {{"ret", "5"}}) == "GPU reset failed (5); drain");
  CHECK(InterpolateSummary(t, {{"pci", ""}}) == "GPU reset failed; drain");
  CHECK(InterpolateSummary(t, {}) == "GPU reset failed; drain");
  // Nested sections, literal braces inside, and a section without a capture.
  CHECK(InterpolateSummary("a{?({x}{? y={y}}) {{}b{?never}", {{"y", "2"}}) == "a( y=2) {b");
  CHECK(InterpolateSummary("a{?({x}{? y={y}}) {{}b", {}) == "ab");
  CHECK(InterpolateSummary("{?a{?{b}}}c", {{"b", "B"}}) == "aBc");
  // Unclosed: read as before, a lone brace.
  CHECK(InterpolateSummary("a{?b", {}) == "a{?b");
  CHECK(SummaryCaptures("GPU{? {pci}} failed{? ({err}{? ret {ret}})} {x}") ==
        std::vector<std::string>{"pci", "err", "ret", "x"});
}

// ResolveOutcome writes a summary from its template read once into pieces
// (kept per thread by the template's address, its text compared before
// use): every template of up to 6 of '{', '}', '?', 'a', 'b' must give what
// InterpolateSummary's reading gives, for captures with a value, empty and
// absent.
TEST_CASE("ResolveOutcome's summary is InterpolateSummary's for every short template") {
  const std::vector<std::map<std::string, std::string>> field_sets = {
      {}, {{"a", "A"}}, {{"a", "A"}, {"b", ""}}, {{"b", "B"}, {"ab", "X"}}};
  constexpr std::string_view kAlphabet = "{}?ab";
  Rule rule;
  rule.id = "t.summary";
  std::size_t compared = 0;
  std::string summary;
  for (std::size_t length = 0; length <= 6; ++length) {
    std::vector<std::size_t> digits(length, 0);
    while (true) {
      summary.clear();
      for (std::size_t d : digits) summary += kAlphabet[d];
      rule.summary = summary;
      for (const auto& fields : field_sets) {
        RuleMatch m;
        m.rule = &rule;
        m.fields = fields;
        ResolveOutcome(rule, m);
        const std::string want = summary.empty() ? rule.id : InterpolateSummary(summary, fields);
        if (m.summary != want) {
          CAPTURE(summary);
          CHECK(m.summary == want);
          return;
        }
        ++compared;
      }
      std::size_t i = 0;
      while (i < length && ++digits[i] == kAlphabet.size()) digits[i++] = 0;
      if (i == length) break;
    }
  }
  CHECK(compared == 4 * (1 + 5 + 25 + 125 + 625 + 3125 + 15625));
}

TEST_CASE("ResolveOutcome follows a template changed in place, and more templates than it keeps") {
  Rule rule;
  rule.id = "t.summary";
  rule.summary = "{a} at {b}";
  const std::map<std::string, std::string> fields = {{"a", "A"}, {"b", "B"}, {"c", "C"}};
  RuleMatch m;
  m.fields = fields;
  ResolveOutcome(rule, m);
  CHECK(m.summary == "A at B");
  // The same bytes' address and size, another text.
  const char* const at = rule.summary.data();
  rule.summary[1] = 'c';
  REQUIRE(rule.summary.data() == at);
  ResolveOutcome(rule, m);
  CHECK(m.summary == "C at B");
  // 600 rules, each template resolved twice, in two passes (slots taken
  // over), and on two threads at once.
  std::vector<Rule> rules(600);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    rules[i].id = "t." + std::to_string(i);
    rules[i].summary = "#" + std::to_string(i) + "{? {a}}{?{x}}";
  }
  const auto resolve_all = [&] {
    std::size_t right = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (const Rule& r : rules) {
        RuleMatch match;
        match.fields = fields;
        ResolveOutcome(r, match);
        right += match.summary == r.summary.substr(0, r.summary.find('{')) + " A";
      }
    }
    return right;
  };
  std::size_t other_thread = 0;
  std::thread thread([&] { other_thread = resolve_all(); });
  const std::size_t this_thread = resolve_all();
  thread.join();
  CHECK(this_thread == 2 * rules.size());
  CHECK(other_thread == 2 * rules.size());
}

TEST_CASE("summary interpolation answers every short template as the char-by-char reading") {
  // The former implementation, one character at a time: InterpolateSummary
  // now appends the text between braces in one piece and must read every
  // template the same way (doubled, lone, unclosed and empty braces).
  auto reference = [](std::string_view summary, const std::map<std::string, std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < summary.size(); ++i) {
      char c = summary[i];
      if ((c == '{' || c == '}') && i + 1 < summary.size() && summary[i + 1] == c) {
        out += c;
        ++i;
        continue;
      }
      if (c == '{') {
        std::size_t close = summary.find('}', i + 1);
        if (close != std::string_view::npos) {
          auto it = fields.find(std::string(summary.substr(i + 1, close - i - 1)));
          if (it != fields.end()) out += it->second;
          i = close;
          continue;
        }
      }
      out += c;
    }
    return out;
  };
  const std::map<std::string, std::string> f{{"a", "1"}, {"ab", "22"}, {"", "empty"}};
  const std::string alphabet = "{}ab ";
  std::size_t checked = 0;
  for (std::size_t len = 0; len <= 7; ++len) {
    std::size_t combos = 1;
    for (std::size_t k = 0; k < len; ++k) combos *= alphabet.size();
    for (std::size_t n = 0; n < combos; ++n) {
      std::string t;
      for (std::size_t k = 0, v = n; k < len; ++k, v /= alphabet.size()) {
        t += alphabet[v % alphabet.size()];
      }
      if (InterpolateSummary(t, f) != reference(t, f)) {
        FAIL_CHECK("template '" << t << "': " << InterpolateSummary(t, f) << " vs "
                                << reference(t, f));
      }
      ++checked;
    }
  }
  CHECK(checked == 97'656);
}

TEST_CASE("an override from a later pack changes keys and merges classify entries") {
  const std::string local = R"(pack: local
version: 1
rules:
  - id: nvidia.xid
    override: true
    classify:
      values:
        "13": {action: taint, severity: error}
  - id: gpu.any-nvrm
    override: true
    disabled: true
)";
  Loaded l = LoadPacks({{"a.yaml", kXidPack}, {"b.yaml", local}});
  REQUIRE(l.set);
  CHECK(l.set->size() == 1);
  CHECK(l.set->rules().size() == 2);
  CHECK(l.set->rules()[1].disabled);
  auto m13 = MatchLine(*l.set, "NVRM: Xid (PCI:0000:3b:00): 13, x", Origin::kKernel);
  REQUIRE(m13.size() == 1);
  CHECK(m13[0].action == Action::kTaint);
  CHECK(m13[0].severity == Severity::kError);
  // 31 stays in the rest of the list; 79 is untouched.
  auto m31 = MatchLine(*l.set, "NVRM: Xid (PCI:0000:3b:00): 31, x", Origin::kKernel);
  REQUIRE(m31.size() == 1);
  CHECK(m31[0].category == "application");
  CHECK(m31[0].action == Action::kEvent);
  auto m79 = MatchLine(*l.set, "NVRM: Xid (PCI:0000:3b:00): 79, x", Origin::kKernel);
  CHECK(m79[0].action == Action::kTaint);
  CHECK(m79[0].rule->pack == "xid");
}

TEST_CASE("an override replaces the pattern and the sources when it gives them") {
  const std::string local = R"(pack: local
version: 1
rules:
  - id: gpu.any-nvrm
    override: true
    pattern: 'NVRM: GPU (?P<gpu>\S+)'
    sources: [journal]
    summary: 'GPU {gpu}'
)";
  Loaded l = LoadPacks({{"a.yaml", kXidPack}, {"b.yaml", local}});
  REQUIRE(l.set);
  auto m = MatchLine(*l.set, "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed", Origin::kJournal);
  REQUIRE(m.size() == 1);
  CHECK(m[0].summary == "GPU 0000:3b:00.0:");
  CHECK(MatchLine(*l.set, "NVRM: GPU 0000:3b:00.0", Origin::kPod).empty());
}

TEST_CASE("reload: a failed load leaves the running RuleSet in the holder") {
  Loaded good = LoadPack(kXidPack);
  REQUIRE(good.set);
  RuleSetHolder holder(good.set);
  Loaded bad =
      LoadPack("pack: x\nversion: 1\nrules:\n  - id: a\n    sources: [kernel]\n    pattern: '('\n");
  CHECK_FALSE(bad.set);
  if (bad.set) holder.Replace(bad.set);  // what the agent does: swap only a good set
  auto snapshot = holder.Get();
  CHECK(snapshot == good.set);
  CHECK(MatchLine(*snapshot, "NVRM: Xid (0000:03:00): 13, x", Origin::kKernel).size() == 2);

  Loaded next = LoadPack(
      "pack: y\nversion: 1\nrules:\n  - id: b\n    sources: [kernel]\n    pattern: 'hello'\n");
  REQUIRE(next.set);
  holder.Replace(next.set);
  CHECK(holder.Get()->rules()[0].id == "b");
  // The old snapshot stays valid for a reader that still holds it.
  CHECK(snapshot->rules()[0].id == "nvidia.xid");
}

TEST_CASE("Match is safe from many threads at once") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        total += static_cast<int>(
            MatchLine(*l.set, "NVRM: Xid (0000:03:00): 79, x", Origin::kKernel).size());
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(total == 4 * 500 * 2);
}

TEST_CASE("first use from many threads: each origin's Set and the prefilter are built once") {
  // A fresh RuleSet builds origin kernel's and pod's RE2::Set and the
  // prefilter database when first used (rule_set_impl.h); records (the
  // prefilter path) and bare text (the Set) race for them here.
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  std::atomic<int> total{0};
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Origin origin = t % 2 == 0 ? Origin::kKernel : Origin::kPod;
      LogRecord record;
      record.origin = origin;
      record.text = "NVRM: Xid (0000:03:00): 79, x";
      for (int i = 0; i < 200; ++i) {
        std::vector<RuleMatch> out;
        l.set->Match(record, out);
        total += static_cast<int>(out.size());
        total += static_cast<int>(MatchLine(*l.set, record.text, origin).size());
      }
    });
  }
  for (auto& t : threads) t.join();
  // kernel: both rules; pod: only gpu.any-nvrm. Twice per round.
  CHECK(total == 2 * 200 * (2 + 2) + 2 * 200 * (1 + 1));
  CHECK(l.set->prefilter_active());
}

TEST_CASE("RE2::Set out of memory falls back to one-by-one matching and is counted") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  RuleSetTesting::SimulateDfaOutOfMemory(*l.set);
  CHECK(l.set->dfa_fallbacks() == 0);
  auto m = MatchLine(*l.set, "NVRM: Xid (PCI:0000:3b:00): 79, x", Origin::kKernel);
  REQUIRE(m.size() == 2);  // the same answer as the Set gives
  CHECK(m[0].rule->id == "nvidia.xid");
  CHECK(m[0].action == Action::kTaint);
  CHECK(MatchLine(*l.set, "nothing to see", Origin::kKernel).empty());
  CHECK(l.set->dfa_fallbacks() == 2);
}

TEST_CASE("MakeFaultEvent fills the event from the match and the record") {
  Loaded l = LoadPack(kXidPack);
  REQUIRE(l.set);
  LogRecord record;
  record.source = "kmsg";
  record.origin = Origin::kKernel;
  record.text = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1";
  record.cursor = "boot:42";
  record.labels = {{"priority", "4"}};
  std::vector<RuleMatch> out;
  l.set->Match(record, out);
  REQUIRE(!out.empty());
  auto now = std::chrono::system_clock::now();
  FaultEvent e = MakeFaultEvent(out[0], record, "gpu-17", "b00t", now);
  CHECK(e.rule == "nvidia.xid");
  CHECK(e.pack == "xid");
  CHECK(e.node == "gpu-17");
  CHECK(e.boot_id == "b00t");
  CHECK(e.action == Action::kTaint);
  CHECK(e.id == MakeEventId("gpu-17", "kmsg", "boot:42", "nvidia.xid"));
  CHECK(e.message == record.text);
  CHECK(e.labels.at("priority") == "4");
  CHECK(e.detected_time == now);
  CHECK(e.expire == std::chrono::seconds(7200));
}

// Issue 16.2: a rule's `peer` capture travels as the event's `peer` (the
// tainter attributes the line to the node at that address), and survives
// the JSON round trip through Kafka.
TEST_CASE("MakeFaultEvent carries the peer capture of a rule with `peer`") {
  Loaded l = LoadPack(R"(pack: n
version: 1
rules:
  - id: nccl.ib
    sources: [pod]
    pattern: 'Got completion from peer (?P<peer>[^<\s]+)'
    peer: peer
  - id: nccl.other
    sources: [pod]
    pattern: 'Got completion from peer (?P<peer>[^<\s]+)'
)");
  REQUIRE(l.set);
  LogRecord record;
  record.source = "podlog";
  record.origin = Origin::kPod;
  record.text = "NET/IB : Got completion from peer 10.0.4.12<33941> with status=12";
  std::vector<RuleMatch> out;
  l.set->Match(record, out);
  REQUIRE(out.size() == 2);
  const FaultEvent e = MakeFaultEvent(out[0], record, "gpu-1", "b", {});
  CHECK(e.peer == "10.0.4.12");
  CHECK(MakeFaultEvent(out[1], record, "gpu-1", "b", {}).peer.empty());
  auto back = ParseFaultEvent(SerializeFaultEvent(e));
  REQUIRE(back);
  CHECK(back->peer == "10.0.4.12");
  CHECK(ToJson(MakeFaultEvent(out[1], record, "gpu-1", "b", {})).count("peer") == 0);
}

// `faultline scan` fills one FaultEvent again and again (FillFaultEvent):
// nothing of an earlier event may leak into the next, whatever optional
// members the earlier one had and the next one lacks.
TEST_CASE("FillFaultEvent into a used event gives MakeFaultEvent's event, byte for byte") {
  Loaded l = LoadPack(R"(pack: n
version: 1
rules:
  - id: nccl.ib
    sources: [pod]
    pattern: 'Got completion from peer (?P<peer>[^<\s]+)'
    peer: peer
    condition: NetworkFault
    recover: reboot
    probation: 10m
    expire: 1h
    threshold: {count: 3, window: 1h, key: [peer]}
    action: taint
  - id: plain.line
    sources: [pod]
    pattern: 'completion'
)");
  REQUIRE(l.set);
  LogRecord record;
  record.source = "podlog";
  record.origin = Origin::kPod;
  record.text = "NET/IB : Got completion from peer 10.0.4.12<33941> with status=12";
  record.cursor = "c:1";
  record.labels = {{"file", "a.log"}, {"line", "1"}, {"extra", "x"}};
  std::vector<RuleMatch> out;
  l.set->Match(record, out);
  REQUIRE(out.size() == 2);
  const auto now = std::chrono::system_clock::now();
  FaultEvent reused;
  FillFaultEvent(out[0], record, "gpu-1", "boot-a", now, reused);
  reused.suppressed = 7;  // as the agent's suppression window sets them
  reused.evidence = {"an earlier line"};
  CHECK(SerializeFaultEvent(reused) !=
        SerializeFaultEvent(MakeFaultEvent(out[0], record, "gpu-1", "boot-a", now)));
  LogRecord next = record;
  next.text = "completion";
  next.cursor = "c:2";
  next.labels = {{"line", "2"}};
  FillFaultEvent(out[1], next, "gpu-2", "", now + std::chrono::seconds(1), reused);
  const FaultEvent fresh = MakeFaultEvent(out[1], next, "gpu-2", "", now + std::chrono::seconds(1));
  CHECK(SerializeFaultEvent(reused) == SerializeFaultEvent(fresh));
  CHECK(reused.peer.empty());
  CHECK(!reused.threshold);
  CHECK(!reused.probation);
  CHECK(reused.evidence.empty());
  CHECK(reused.suppressed == 0);
  CHECK(reused.labels.size() == 1);
  CHECK(reused.id == MakeEventId("gpu-2", "podlog", "c:2", "plain.line"));
}

// `faultline scan` writes its events from views (ViewFaultEvent), the agent
// from a FaultEvent (MakeFaultEvent): the same JSON for every match of every
// built-in rule's match tests (peers, clears, probation, thresholds,
// conditions, classified outcomes), in both key orders and through an
// EventTextMemo, and for a line of invalid UTF-8 and control bytes longer
// than a message may be.
TEST_CASE("ViewFaultEvent writes MakeFaultEvent's JSON for every built-in rule's matches") {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules({}, {}, diags, texts);
  REQUIRE(set);
  const auto now = std::chrono::system_clock::now();
  EventViewBuffers buffers;
  EventTextMemo memo;
  std::size_t compared = 0;
  const auto compare = [&](const RuleMatch& m, const LogRecord& record) {
    const std::vector<StringViewPair> labels(record.labels.begin(), record.labels.end());
    RecordView view{record.source, record.origin, record.text, record.cursor, record.time, labels};
    view.cursor_shared = compared % 2 ? std::string_view("/var/log/k.log:").size() : 0;
    const FaultEventView v = ViewFaultEvent(m, view, "gpu-1", "boot-a", now, buffers);
    const FaultEvent e = MakeFaultEvent(m, record, "gpu-1", "boot-a", now);
    for (EventKeyOrder order : {EventKeyOrder::kSchema, EventKeyOrder::kSorted}) {
      std::string from_view, from_event;
      AppendFaultEventMembers(from_view, v, order, /*first=*/true);
      AppendFaultEventMembers(from_event, e, order, /*first=*/true);
      CHECK_MESSAGE(from_view == from_event, m.rule->id);
    }
    // And through the memo `faultline scan` keeps from event to event.
    std::string from_memo, from_event;
    AppendFaultEventMembers(from_memo, v, memo, /*first=*/true);
    AppendFaultEventMembers(from_event, e, EventKeyOrder::kSchema, /*first=*/true);
    CHECK_MESSAGE(from_memo == from_event, m.rule->id);
    ++compared;
  };
  for (const Rule& rule : set->rules()) {
    if (rule.disabled) continue;
    for (const RuleTest& t : rule.match_tests) {
      LogRecord record;
      record.source = "file";
      record.origin = t.origin.value_or(rule.sources.front());
      record.text = t.line;
      record.cursor = "/var/log/k.log:17";
      record.time = now - std::chrono::seconds(5);
      record.labels = t.labels;
      record.labels["file"] = "/var/log/k.log";
      std::vector<RuleMatch> out;
      set->Match(record, out);
      for (const RuleMatch& m : out) compare(m, record);
      // The same line with bytes to escape or replace, cut as a message.
      record.text = t.line + " \"\\\x01\xff\xc3\xa9 " + std::string(3000, 'x');
      out.clear();
      set->Match(record, out);
      for (const RuleMatch& m : out) compare(m, record);
    }
  }
  CHECK(compared > 300);
}

// Issue 11.4: NCCL WARN's `(?P<message>.+)` of a 250 KiB line made 250 KiB
// captures, a 250 KiB summary, and a 500 KiB event held by the agent.
TEST_CASE(
    "captures and the summary are cut to their bounds, so one huge line makes a small event") {
  Loaded l = LoadPack(R"(pack: nccl
version: 1
rules:
  - id: nccl.warn
    sources: [pod]
    pattern: 'NCCL WARN (?P<message>.+)'
    category: nccl
    severity: info
    action: event
    summary: 'NCCL WARN {message} / {message}'
)");
  REQUIRE(l.set);
  LogRecord record;
  record.source = "podlog";
  record.origin = Origin::kPod;
  record.text = "NCCL WARN " + std::string(std::size_t{250} * 1024, 'x');
  std::vector<RuleMatch> out;
  l.set->Match(record, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].fields.at("message") == std::string(FaultEvent::kMaxFieldBytes, 'x'));
  CHECK(out[0].summary.size() == FaultEvent::kMaxSummaryBytes);
  const FaultEvent e = MakeFaultEvent(out[0], record, "gpu-1", "b", {});
  CHECK(SerializeFaultEvent(e).size() < 8192);
}

}  // namespace
}  // namespace faultline
