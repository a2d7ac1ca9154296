// SPDX-License-Identifier: Apache-2.0
#include "matcher/rule_tests.h"

#include <string>
#include <vector>

#include "matcher/classify.h"

namespace faultline {
namespace {

const RuleMatch* FindMatch(const std::vector<RuleMatch>& matches, const Rule& rule) {
  for (const RuleMatch& m : matches) {
    if (m.rule == &rule) return &m;
  }
  return nullptr;
}

Origin TestOrigin(const Rule& rule, const RuleTest& t) {
  if (t.origin) return *t.origin;
  return rule.sources.empty() ? Origin::kAny : rule.sources.front();
}

LogRecord TestRecord(const RuleTest& t, Origin origin) {
  LogRecord r;
  r.text = t.line;
  r.origin = origin;
  r.labels = t.labels;
  return r;
}

// W203: a summary that prints a capture empty for a real line reads
// "GPU  fell off the bus" or "failed ()" on the node; an optional section
// ("GPU{? {pci}} fell off") leaves it out instead.
void WarnEmptySummaryCaptures(const Rule& rule, const RuleMatch& m, const RuleTest& t,
                              Diagnostics& diags) {
  RuleMatch resolved = m;
  ResolveOutcomeTemplate(rule, resolved);
  for (const std::string& name : EmptySummaryCaptures(resolved.summary, m.fields)) {
    std::string message = "rule '" + rule.id + "': the summary prints capture '";
    message += name;
    message += "' empty for this line; put it in an optional section: {? ... {";
    message += name;
    message += "} ...}";
    diags.Warning("W203", t.at, message);
  }
}

}  // namespace

RuleTestCounts RunRuleTests(const RuleSet& set, Diagnostics& diags) {
  RuleTestCounts counts;
  std::vector<RuleMatch> matches;
  for (const Rule& rule : set.rules()) {
    if (rule.disabled) continue;
    for (const RuleTest& t : rule.match_tests) {
      ++counts.run;
      matches.clear();
      const Origin origin = TestOrigin(rule, t);
      set.Match(TestRecord(t, origin), matches);
      const RuleMatch* m = FindMatch(matches, rule);
      if (!m) {
        diags.Error("T001", t.at,
                    "rule '" + rule.id + "' did not match its test line (as origin " +
                        std::string(OriginName(origin)) + ")");
        ++counts.failed;
        continue;
      }
      bool ok = true;
      // NOLINTBEGIN(performance-inefficient-string-concatenation): a message per failure
      for (const auto& [name, expected] : t.fields) {
        auto it = m->fields.find(name);
        if (it == m->fields.end()) {
          diags.Error("T002", t.at,
                      "rule '" + rule.id + "': capture '" + name +
                          "' did not take part, expected '" + expected + "'");
          ok = false;
        } else if (it->second != expected) {
          diags.Error("T002", t.at,
                      "rule '" + rule.id + "': capture '" + name + "' is '" + it->second +
                          "', expected '" + expected + "'");
          ok = false;
        }
      }
      // NOLINTEND(performance-inefficient-string-concatenation)
      if (t.action && *t.action != m->action) {
        diags.Error("T004", t.at,
                    "rule '" + rule.id + "': action is " + std::string(ActionName(m->action)) +
                        ", expected " + std::string(ActionName(*t.action)));
        ok = false;
      }
      if (t.severity && *t.severity != m->severity) {
        diags.Error("T004", t.at,
                    "rule '" + rule.id + "': severity is " +
                        std::string(SeverityName(m->severity)) + ", expected " +
                        std::string(SeverityName(*t.severity)));
        ok = false;
      }
      WarnEmptySummaryCaptures(rule, *m, t, diags);
      if (!ok) ++counts.failed;
    }
    for (const RuleTest& t : rule.no_match_tests) {
      ++counts.run;
      matches.clear();
      const Origin origin = TestOrigin(rule, t);
      set.Match(TestRecord(t, origin), matches);
      if (FindMatch(matches, rule)) {
        diags.Error("T003", t.at,
                    "rule '" + rule.id + "' matched a no_match line (as origin " +
                        std::string(OriginName(origin)) + ")");
        ++counts.failed;
      }
    }
  }
  return counts;
}

}  // namespace faultline
