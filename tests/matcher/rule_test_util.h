// SPDX-License-Identifier: Apache-2.0
// Helpers for matcher tests: load packs from text the way the CLI does.
#pragma once

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "matcher/literal_prefilter.h"
#include "matcher/rule_merge.h"
#include "matcher/rule_set.h"
#include "matcher/rule_snapshot.h"
#include "tests/support/temp_dir.h"

namespace faultline {

struct Loaded {
  std::shared_ptr<const RuleSet> set;
  Diagnostics diags;
  SourceTexts texts;

  // The diagnostics with `code`, as "line:column".
  std::vector<std::string> Where(const std::string& code) const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diags.all()) {
      if (d.code == code) {
        out.push_back(std::to_string(d.where.line) + ":" + std::to_string(d.where.column));
      }
    }
    return out;
  }
  bool Has(const std::string& code) const { return !Where(code).empty(); }
  std::string Message(const std::string& code) const {
    for (const Diagnostic& d : diags.all()) {
      if (d.code == code) return d.message;
    }
    return "";
  }
};

// Writes each (name, text) into a TempDir and loads them, in order, without
// the built-in packs.
inline Loaded LoadPacks(const std::vector<std::pair<std::string, std::string>>& packs,
                        CompileOptions options = {}) {
  TempDir dir;
  RuleSources sources;
  sources.builtin = false;
  for (const auto& [name, text] : packs) sources.paths.push_back(dir.Write(name, text));
  Loaded l;
  l.set = LoadRules(sources, options, l.diags, l.texts);
  return l;
}

inline Loaded LoadPack(const std::string& text, CompileOptions options = {}) {
  return LoadPacks({{"pack.yaml", text}}, options);
}

// The built-in packs' rules, merged as LoadRules merges them.
inline std::vector<Rule> BuiltinRules() {
  std::vector<RulePack> packs;
  for (const RulePackText& text : BuiltinRulePacks()) packs.push_back(ReadBuiltinPack(text).pack);
  Diagnostics diags;
  std::vector<Rule> rules = MergeRulePacks(std::move(packs), diags);
  REQUIRE(!diags.has_errors());
  return rules;
}

// The built-in packs, then `local_pack` (a file of its own), as the CLI
// loads them.
inline Loaded LoadWithBuiltins(const std::string& local_pack, CompileOptions options = {}) {
  TempDir dir;
  RuleSources sources;
  sources.builtin = true;
  sources.paths.push_back(dir.Write("local.yaml", local_pack));
  Loaded l;
  l.set = LoadRules(sources, options, l.diags, l.texts);
  return l;
}

// `text` compiled twice: as faultline runs it, and without the literal
// prefilter (the reference its results must equal). Both must load.
struct PrefilterPair {
  Loaded with, without;
};
inline PrefilterPair LoadWithAndWithoutPrefilter(const std::string& text) {
  CompileOptions off;
  off.use_prefilter = false;
  PrefilterPair pair{LoadPack(text), LoadPack(text, off)};
  REQUIRE(pair.with.set);
  REQUIRE(pair.without.set);
  return pair;
}

// Literal sets rendered for a CHECK: one "a|b|" string per set, "(?i)"
// before a caseless literal.
inline std::vector<std::string> RenderLiteralSets(
    const std::vector<std::vector<RequiredLiteral>>& sets) {
  std::vector<std::string> out;
  out.reserve(sets.size());
  for (const std::vector<RequiredLiteral>& set : sets) {
    std::string r;
    for (const RequiredLiteral& l : set) r += (l.caseless ? "(?i)" : "") + l.text + "|";
    out.push_back(r);
  }
  return out;
}

inline std::vector<RuleMatch> MatchLine(const RuleSet& set, std::string_view line,
                                        Origin origin = Origin::kAny) {
  std::vector<RuleMatch> out;
  set.Match(line, origin, out);
  return out;
}

}  // namespace faultline
