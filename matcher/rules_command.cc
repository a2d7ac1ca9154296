// SPDX-License-Identifier: Apache-2.0
// `faultline rules check` and `faultline rules list`.
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/time_format.h"
#include "matcher/cli_commands.h"
#include "matcher/ere_export.h"
#include "matcher/rule_set.h"
#include "matcher/rule_tests.h"

namespace faultline {
namespace {

constexpr const char* kRulesUsage =
    R"(usage: faultline rules check [PATH]... [--no-builtin] [--format json|text] [--werror]
       faultline rules list  [PATH]... [--no-builtin] [--format text|json|ere]

check  loads the built-in packs (unless --no-builtin), then each PATH (a pack
       file or a directory of *.yaml packs), reports every problem as
       file:line:col: error: message [code], and runs every rule's embedded
       tests. Exit status: 0 ok, 1 a rule test failed, 2 invalid packs (or
       any warning with --werror) or bad usage.
list   prints each rule: id, pack, sources, category, severity, action,
       threshold, expire. --format ere prints one POSIX extended regex per
       enabled rule, for `grep -E -f` and `rg -f`; rules ERE cannot express
       are named on stderr.
)";

struct RulesOptions {
  std::string verb;
  RuleSources sources;
  std::string format = "text";
  bool werror = false;
};

std::string Sources(const Rule& r) {
  std::string s;
  for (Origin o : r.sources) s += (s.empty() ? "" : ",") + std::string(OriginName(o));
  return s;
}

std::string ThresholdText(const Rule& r) {
  if (!r.threshold) return "-";
  std::string s = std::to_string(r.threshold->count) + "/" + FormatDuration(r.threshold->window);
  if (!r.threshold->key.empty()) {
    s += " by ";
    for (std::size_t i = 0; i < r.threshold->key.size(); ++i) {
      s += (i ? "," : "") + r.threshold->key[i];
    }
  }
  return s;
}

int Check(const RulesOptions& o, std::ostream& out, std::ostream& err) {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules(o.sources, {}, diags, texts);
  RuleTestCounts counts;
  if (set) counts = RunRuleTests(*set, diags);
  std::size_t load_errors = 0, test_failures = 0;
  for (const Diagnostic& d : diags.all()) {
    if (d.level != Diagnostic::Level::kError) continue;
    (d.code[0] == 'T' ? test_failures : load_errors)++;
  }
  int status = 0;
  if (!set || load_errors > 0 || (o.werror && diags.warning_count() > 0)) {
    status = 2;
  } else if (test_failures > 0) {
    status = 1;
  }
  const std::size_t rules = set ? set->rules().size() : 0;
  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["ok"] = status == 0;
    j["exit_status"] = status;
    j["files"] = texts.size();
    j["rules"] = rules;
    j["tests_run"] = counts.run;
    j["tests_failed"] = counts.failed;
    j["errors"] = diags.error_count();
    j["warnings"] = diags.warning_count();
    j["diagnostics"] = diags.ToJson();
    out << j.dump(2) << "\n";
  } else {
    diags.Print(out, texts);
    out << texts.size() << " files, " << rules << " rules, " << counts.run << " tests ("
        << counts.failed << " failed): " << load_errors << " errors, " << diags.warning_count()
        << " warnings\n";
  }
  (void)err;
  return status;
}

int List(const RulesOptions& o, std::ostream& out, std::ostream& err) {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules(o.sources, {}, diags, texts);
  if (!set) {
    diags.Print(err, texts);
    err << "faultline rules list: invalid rule packs\n";
    return 2;
  }
  if (o.format == "ere") {
    std::size_t skipped = 0;
    for (const Rule& r : set->rules()) {
      if (r.disabled) continue;
      std::string why;
      std::optional<std::string> ere = TranslateToEre(r.pattern, &why);
      if (!ere) {
        err << "faultline rules list: skipped " << r.id << ": " << why << "\n";
        ++skipped;
        continue;
      }
      out << *ere << "\n";
    }
    return 0;
  }
  if (o.format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const Rule& r : set->rules()) {
      nlohmann::ordered_json j;
      j["id"] = r.id;
      j["pack"] = r.pack;
      j["sources"] = nlohmann::json::array();
      for (Origin s : r.sources) j["sources"].push_back(OriginName(s));
      j["category"] = r.category;
      j["severity"] = SeverityName(r.severity);
      j["action"] = ActionName(r.action);
      if (r.threshold) {
        j["threshold"] = {{"count", r.threshold->count},
                          {"window", FormatDuration(r.threshold->window)},
                          {"key", r.threshold->key}};
      }
      if (r.expire) j["expire"] = FormatDuration(*r.expire);
      j["classify"] = r.classify ? r.classify->capture : "";
      j["disabled"] = r.disabled;
      j["overridden"] = r.is_override;
      j["pattern"] = r.pattern;
      j["prefilter"] = set->PrefilterLiterals(r.id);
      j["defined_at"] = r.defined_at.file + ":" + std::to_string(r.defined_at.line);
      arr.push_back(std::move(j));
    }
    out << arr.dump(2) << "\n";
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %-14s %-18s %-16s %-9s %-7s %-14s %s\n", "ID", "PACK",
                "SOURCES", "CATEGORY", "SEVERITY", "ACTION", "THRESHOLD", "EXPIRE");
  out << line;
  for (const Rule& r : set->rules()) {
    std::string action = std::string(ActionName(r.action)) + (r.classify ? "*" : "");
    std::snprintf(line, sizeof line, "%-36s %-14s %-18s %-16s %-9s %-7s %-14s %s%s\n", r.id.c_str(),
                  r.pack.c_str(), Sources(r).c_str(), r.category.c_str(),
                  std::string(SeverityName(r.severity)).c_str(), action.c_str(),
                  ThresholdText(r).c_str(), r.expire ? FormatDuration(*r.expire).c_str() : "-",
                  r.disabled ? "  (disabled)" : "");
    out << line;
  }
  out << "(* classified: severity and action depend on a capture; see the pack)\n";
  return 0;
}

}  // namespace

int RunRulesCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  RulesOptions o;
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    (args.empty() ? err : out) << kRulesUsage;
    return args.empty() ? 2 : 0;
  }
  o.verb = args[0];
  if (o.verb != "check" && o.verb != "list") {
    err << "faultline rules: unknown command '" << o.verb << "'\n" << kRulesUsage;
    return 2;
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      out << kRulesUsage;
      return 0;
    } else if (a == "--no-builtin") {
      o.sources.builtin = false;
    } else if (a == "--werror" && o.verb == "check") {
      o.werror = true;
    } else if (a == "--format") {
      if (i + 1 >= args.size()) return err << "faultline rules: --format needs a value\n", 2;
      o.format = args[++i];
      std::set<std::string> ok = o.verb == "check" ? std::set<std::string>{"text", "json"}
                                                   : std::set<std::string>{"text", "json", "ere"};
      if (!ok.count(o.format)) {
        err << "faultline rules " << o.verb << ": unknown format '" << o.format << "'\n";
        return 2;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      err << "faultline rules " << o.verb << ": unknown option '" << a << "'\n" << kRulesUsage;
      return 2;
    } else {
      o.sources.paths.push_back(a);
    }
  }
  if (!o.sources.builtin && o.sources.paths.empty()) {
    err << "faultline rules " << o.verb << ": nothing to load (--no-builtin and no PATH)\n";
    return 2;
  }
  return o.verb == "check" ? Check(o, out, err) : List(o, out, err);
}

}  // namespace faultline
