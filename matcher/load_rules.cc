// SPDX-License-Identifier: Apache-2.0
// LoadRules: built-in packs, then files and directories, merged and compiled.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "matcher/rule_merge.h"
#include "matcher/rule_pack.h"
#include "matcher/rule_set.h"
#include "matcher/rule_snapshot.h"

namespace faultline {
namespace {

bool ReadWholeFile(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = "read error";
    return false;
  }
  out = std::move(buffer).str();
  return true;
}

bool IsPackFile(const std::filesystem::path& p) {
  return p.extension() == ".yaml" || p.extension() == ".yml";
}

// Expands a path into the pack files it names, in name order.
std::vector<std::string> PackFiles(const std::string& path, Diagnostics& diags) {
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    diags.Error("E002", {path, 0, 0}, "cannot read rule pack: no such file or directory");
    return {};
  }
  if (!std::filesystem::is_directory(st)) return {path};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (IsPackFile(entry.path()) && !entry.is_directory()) files.push_back(entry.path().string());
  }
  if (ec) diags.Error("E002", {path, 0, 0}, "cannot list directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::shared_ptr<const RuleSet> LoadRules(const RuleSources& sources, const CompileOptions& options,
                                         Diagnostics& diags, SourceTexts& texts) {
  std::vector<RulePack> local;
  for (const std::string& path : sources.paths) {
    for (const std::string& file : PackFiles(path, diags)) {
      std::string text, error;
      if (!ReadWholeFile(file, text, error)) {
        diags.Error("E002", {file, 0, 0}, "cannot read rule pack: " + error);
        continue;
      }
      texts[file] = text;
      local.push_back(ParseRulePack(text, file, diags));
    }
  }
  // A file with the name of a built-in pack replaces that pack: this is how
  // an operator edits a copy of a shipped pack, and why `rules check rules/`
  // checks the files rather than reporting every rule twice.
  std::set<std::string> local_names;
  for (const RulePack& pack : local) local_names.insert(pack.name);
  std::vector<RulePack> packs;
  if (sources.builtin) {
    for (const RulePackText& builtin : BuiltinRulePacks()) {
      // Parsed at build time: the YAML was 60% of a start (bench/README.md).
      ParsedPack parsed = ReadBuiltinPack(builtin);
      if (local_names.count(parsed.pack.name)) continue;
      texts[builtin.file] = builtin.text;
      diags.Append(parsed.diags);
      for (Rule& rule : parsed.pack.rules) rule.checked_at_build = true;
      packs.push_back(std::move(parsed.pack));
    }
  }
  for (RulePack& pack : local) packs.push_back(std::move(pack));
  std::vector<Rule> rules = MergeRulePacks(std::move(packs), diags);
  // Compile even after load errors, so that regex and capture mistakes show
  // up in the same run; the result is dropped then.
  const bool load_failed = diags.has_errors();
  std::shared_ptr<const RuleSet> set = RuleSet::Compile(std::move(rules), options, diags);
  return load_failed ? nullptr : set;
}

}  // namespace faultline
