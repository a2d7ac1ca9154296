// SPDX-License-Identifier: Apache-2.0
#include "matcher/rule_merge.h"

#include <map>
#include <string>

namespace faultline {
namespace {

void MergeOutcome(const Outcome& from, Outcome& into) {
  if (from.category) into.category = from.category;
  if (from.severity) into.severity = from.severity;
  if (from.action) into.action = from.action;
  if (from.summary) into.summary = from.summary;
  if (from.threshold) into.threshold = from.threshold;
  if (from.expire) into.expire = from.expire;
  if (from.condition) into.condition = from.condition;
  if (from.recover) into.recover = from.recover;
  if (from.classify) into.classify = from.classify;
}

// Removes `value` from the comma lists among `table`'s keys, so that a new
// entry for it is the one that applies. Ranges are left alone: an exact
// entry wins over a range when classifying.
void TakeOutOfLists(const std::string& value, std::map<std::string, Outcome>& table) {
  std::map<std::string, Outcome> rebuilt;
  for (auto& [key, outcome] : table) {
    if (key.find(',') == std::string::npos) {
      rebuilt.emplace(key, std::move(outcome));
      continue;
    }
    std::string kept;
    std::size_t start = 0;
    while (true) {
      std::size_t comma = key.find(',', start);
      std::string part =
          key.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      std::string trimmed = part;
      while (!trimmed.empty() && trimmed.front() == ' ') trimmed.erase(0, 1);
      while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
      if (trimmed != value) kept += (kept.empty() ? "" : ",") + trimmed;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (!kept.empty()) rebuilt.emplace(kept, std::move(outcome));
  }
  table = std::move(rebuilt);
}

void MergeClassification(const Classification& from, Classification& into) {
  if (!from.capture.empty()) into.capture = from.capture;
  into.at = from.at;
  for (const auto& [key, outcome] : from.table) {
    if (key.find(',') == std::string::npos) {
      TakeOutOfLists(key, into.table);
    } else {
      std::size_t start = 0;
      while (true) {
        std::size_t comma = key.find(',', start);
        TakeOutOfLists(key.substr(start, comma - start), into.table);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    into.table[key] = outcome;
  }
  MergeOutcome(from.fallback, into.fallback);
}

void ApplyOverride(const Rule& over, Rule& base) {
  auto given = [&](const char* key) { return over.keys_at.count(key) > 0; };
  if (given("description")) base.description = over.description;
  if (given("sources")) base.sources = over.sources;
  if (given("pattern")) {
    base.pattern = over.pattern;
    base.pattern_at = over.pattern_at;
  }
  if (given("category")) base.category = over.category;
  if (given("severity")) base.severity = over.severity;
  if (given("action")) base.action = over.action;
  if (given("summary")) base.summary = over.summary;
  if (given("threshold")) base.threshold = over.threshold;
  if (given("expire")) base.expire = over.expire;
  if (given("condition")) base.condition = over.condition;
  if (given("journal")) base.journal = over.journal;
  if (given("peer")) base.peer = over.peer;
  if (given("recover")) base.recover = over.recover;
  if (given("probation")) base.probation = over.probation;
  if (given("clear")) base.clears = over.clears;
  if (given("classify") && over.classify) {
    if (base.classify) {
      MergeClassification(*over.classify, *base.classify);
    } else {
      base.classify = over.classify;
    }
  }
  if (given("tests")) {
    base.match_tests = over.match_tests;
    base.no_match_tests = over.no_match_tests;
  }
  if (given("disabled")) base.disabled = over.disabled;
  // Any key but these may change what the build checked (the pattern, or a
  // capture name it must define): the rule is checked at load again. Listed
  // as the few that keep the mark, so that a key added later clears it.
  for (const auto& [key, at] : over.keys_at) {
    if (key != "id" && key != "override" && key != "disabled" && key != "description") {
      base.checked_at_build = false;
    }
  }
  base.is_override = true;
  for (const auto& [key, at] : over.keys_at) base.keys_at[key] = at;
}

}  // namespace

std::vector<Rule> MergeRulePacks(std::vector<RulePack> packs, Diagnostics& diags) {
  std::vector<Rule> merged;
  std::map<std::string, std::size_t> index;  // rule id -> position in `merged`
  std::map<std::string, SourceLocation> pack_names;
  for (RulePack& pack : packs) {
    if (!pack.name.empty()) {
      auto [it, fresh] = pack_names.emplace(pack.name, pack.name_at);
      if (!fresh) {
        diags.Error("E103", pack.name_at,
                    "duplicate pack name '" + pack.name + "' (also in " + it->second.file + ")");
        diags.Error("E103", it->second,
                    "pack name '" + pack.name + "' is used again in " + pack.name_at.file);
      }
    }
    for (Rule& rule : pack.rules) {
      if (rule.id.empty()) continue;  // already reported as E102
      auto it = index.find(rule.id);
      if (rule.is_override) {
        if (it == index.end()) {
          diags.Error("E110", rule.defined_at,
                      "override of rule '" + rule.id + "', which no earlier pack defines");
          continue;
        }
        ApplyOverride(rule, merged[it->second]);
        continue;
      }
      if (it != index.end()) {
        const Rule& first = merged[it->second];
        auto where = [](const SourceLocation& at) {
          return at.file + ":" + std::to_string(at.line);
        };
        diags.Error("E103", rule.defined_at,
                    "duplicate rule id '" + rule.id + "' (first defined at " +
                        where(first.defined_at) + "; to change it, add 'override: true')");
        diags.Error("E103", first.defined_at,
                    "rule id '" + rule.id + "' is defined again at " + where(rule.defined_at));
        continue;
      }
      index.emplace(rule.id, merged.size());
      merged.push_back(std::move(rule));
    }
  }
  return merged;
}

}  // namespace faultline
