// SPDX-License-Identifier: Apache-2.0
// Build-time tool: writes the C++ file that embeds the built-in rule packs,
// each as its YAML text byte for byte (for `rules check`'s source lines and
// the test that the text equals rules/) and as its snapshot
// (matcher/rule_snapshot.h), parsed here once instead of at every start;
// the prefilter literals of every pattern in them (matcher/literal_snapshot.h),
// extracted here instead of at every start; the proof that their
// enabled rules fit in one RE2::Set (matcher/set_fit.h), built here; and
// their prefilter's and their sampler's Vectorscan databases
// (matcher/prefilter_db_snapshot.h), compiled here instead of at every
// start's first scan.
//
//   fl-snapshot-rules OUT.cc PACK.yaml...
//
// The packs are named "rules/<file name>" in the order given (CMake sorts
// them). A pack's diagnostics are kept in its snapshot and reported where
// the YAML's would have been: a broken pack still fails at load time, with
// the same messages, not here.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "matcher/literal_snapshot.h"
#include "matcher/prefilter_db_snapshot.h"
#include "matcher/rule_snapshot.h"
#include "matcher/sample_literals.h"
#include "matcher/set_fit.h"

namespace {

// Bytes as a C array body: hex, so that no content can break the C++ syntax.
void WriteBytes(std::ostream& out, std::string_view name, std::string_view bytes) {
  out << "const unsigned char " << name << "[] = {";
  static const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (i % 24 == 0) out << "\n";
    out << "0x" << kHex[b >> 4] << kHex[b & 15] << ",";
  }
  out << "0x00};\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fl-snapshot-rules OUT.cc PACK.yaml...\n");
    return 2;
  }
  std::ostringstream body, entries;
  std::vector<std::string> patterns;
  std::vector<faultline::Rule> rules;  // of every pack, in load order
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "fl-snapshot-rules: cannot read %s\n", argv[i]);
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    faultline::RulePackText pack{
        "rules/" + std::filesystem::path(argv[i]).filename().string(), text.str(), {}};
    faultline::ParsedPack parsed;
    parsed.pack = faultline::ParseRulePack(pack.text, pack.file, parsed.diags);
    const std::string snapshot = faultline::SerializeParsedPack(parsed);
    for (const faultline::Rule& rule : parsed.pack.rules) {
      if (!rule.pattern.empty()) patterns.push_back(rule.pattern);
      rules.push_back(rule);
    }
    const std::string n = std::to_string(i - 2);
    WriteBytes(body, "kText" + n, pack.text);
    WriteBytes(body, "kSnapshot" + n, snapshot);
    entries << "      {\"" << pack.file << "\", std::string(reinterpret_cast<const char*>(kText"
            << n << "), " << pack.text.size()
            << "), std::string_view(reinterpret_cast<const char*>(kSnapshot" << n << "), "
            << snapshot.size() << ")},\n";
  }
  const std::string literals = faultline::SerializeLiteralSnapshot(patterns);
  WriteBytes(body, "kLiterals", literals);
  // The Set RuleSet::Compile builds for origin `any`: every enabled rule, in
  // load order (were a later pack to override one, the list would differ at
  // load time and the proof would not apply: never a wrong one).
  std::vector<std::string_view> enabled;
  for (const faultline::Rule& rule : rules) {
    if (!rule.disabled) enabled.push_back(rule.pattern);
  }
  const std::string set_fit =
      faultline::SetFitProof::Prove(enabled, faultline::CompileOptions{}.max_memory_bytes);
  WriteBytes(body, "kSetFit", set_fit);
  // The prefilter databases of those rules: of their required literals in
  // load order, each once, as BuildPrefilter gathers them; and of what the
  // sampler counts (sample_literals.h), as BuildSampler gathers it.
  std::vector<faultline::RequiredLiteral> searched;
  std::set<std::pair<std::string, bool>> seen;
  std::vector<faultline::PatternLiterals> found(enabled.size());
  for (std::size_t i = 0; i < enabled.size(); ++i) {
    found[i] = faultline::ExtractPatternLiterals(enabled[i]);
  }
  std::vector<faultline::SampleRule> sampled(enabled.size());
  for (std::size_t i = 0; i < enabled.size(); ++i) {
    for (const faultline::RequiredLiteral& lit : found[i].required) {
      if (seen.emplace(lit.text, lit.caseless).second) searched.push_back(lit);
    }
    sampled[i].pattern = enabled[i];
    sampled[i].has_literals = !found[i].required.empty();
    for (const auto& set : found[i].expanded) sampled[i].expanded.push_back(&set);
  }
  const std::string prefilter_db = faultline::SerializePrefilterDbs(
      {searched, faultline::GatherSampleLiterals(sampled).literals});
  WriteBytes(body, "kPrefilterDb", prefilter_db);
  std::ostringstream out;
  out << "// Generated by fl-snapshot-rules (matcher/snapshot_rule_packs.cc) from rules/*.yaml.\n"
      << "// Do not edit.\n#include \"matcher/literal_snapshot.h\"\n"
      << "#include \"matcher/prefilter_db_snapshot.h\"\n"
      << "#include \"matcher/set_fit.h\"\n"
      << "#include \"matcher/rule_set.h\"\n\nnamespace faultline {\nnamespace {\n"
      << body.str() << "}  // namespace\n\n"
      << "std::string_view BuiltinSetFitBytes() {\n"
      << "  return std::string_view(reinterpret_cast<const char*>(kSetFit), " << set_fit.size()
      << ");\n}\n\n"
      << "std::string_view BuiltinPrefilterDbBytes() {\n"
      << "  return std::string_view(reinterpret_cast<const char*>(kPrefilterDb), "
      << prefilter_db.size() << ");\n}\n\n"
      << "std::string_view BuiltinLiteralSnapshotBytes() {\n"
      << "  return std::string_view(reinterpret_cast<const char*>(kLiterals), " << literals.size()
      << ");\n}\n\n"
      << "const std::vector<RulePackText>& BuiltinRulePacks() {\n"
      << "  static const std::vector<RulePackText> packs = {\n"
      << entries.str() << "  };\n  return packs;\n}\n\n}  // namespace faultline\n";
  // Rewritten only when it changed; else only its time is, so that the build
  // sees it newer than this tool and the packs (or it would run this again at
  // every build) and recompiles it once.
  const std::string next = out.str();
  std::ifstream old(argv[1], std::ios::binary);
  std::ostringstream current;
  if (old) current << old.rdbuf();
  if (old && current.str() == next) {
    std::error_code ec;
    std::filesystem::last_write_time(argv[1], std::filesystem::file_time_type::clock::now(), ec);
    return ec ? 1 : 0;
  }
  std::ofstream write(argv[1], std::ios::binary | std::ios::trunc);
  write << next;
  return write.good() ? 0 : 1;
}
