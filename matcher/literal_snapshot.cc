// SPDX-License-Identifier: Apache-2.0
#include "matcher/literal_snapshot.h"

#include <cstdint>
#include <utility>

#include "matcher/literal_expansion.h"
#include "matcher/snapshot_bytes.h"

#ifndef FL_LITERAL_CODE_DIGEST
#error "FL_LITERAL_CODE_DIGEST must be defined (matcher/CMakeLists.txt)"
#endif

namespace faultline {

const std::string_view kLiteralCodeDigest = FL_LITERAL_CODE_DIGEST;

namespace {

// Bumped whenever PatternLiterals or this layout changes (the digest covers
// this file too; the layout word also refuses bytes that are not a literal
// snapshot at all).
constexpr std::uint32_t kLayout = 0x464c4c02;  // "FLL" 2

void WriteSet(ByteWriter& w, const std::vector<RequiredLiteral>& set) {
  w.U32(static_cast<std::uint32_t>(set.size()));
  for (const RequiredLiteral& lit : set) {
    w.Str(lit.text);
    w.Bool(lit.caseless);
  }
}

void WriteSets(ByteWriter& w, const std::vector<std::vector<RequiredLiteral>>& sets) {
  w.U32(static_cast<std::uint32_t>(sets.size()));
  for (const std::vector<RequiredLiteral>& set : sets) WriteSet(w, set);
}

std::vector<RequiredLiteral> ReadSet(ByteReader& r) {
  std::vector<RequiredLiteral> set(r.Count());
  for (RequiredLiteral& lit : set) {
    lit.text = r.Str();
    lit.caseless = r.Bool();
  }
  return set;
}

std::vector<std::vector<RequiredLiteral>> ReadSets(ByteReader& r) {
  std::vector<std::vector<RequiredLiteral>> sets(r.Count());
  for (std::vector<RequiredLiteral>& set : sets) set = ReadSet(r);
  return sets;
}

}  // namespace

PatternLiterals ExtractPatternLiterals(std::string_view pattern) {
  PatternLiterals out;
  RequiredAndConfirmLiterals plain = ExtractRequiredAndConfirmLiterals(pattern);
  out.required = std::move(plain.required);
  if (!out.required.empty()) {
    out.confirm = std::move(plain.confirm);
    out.expanded = ExtractExpandedLiteralSets(pattern);
    return out;
  }
  // No plain literal of 3 bytes between the pattern's choices: a letter's
  // two cases as a class (`[Xx][Ii][Dd]`) are that letter caseless, or a
  // set that spells the choices out (`(?i)nv(?:rm|link)`) is required too;
  // searching for it keeps the rule off every other line (without one, its
  // regex runs on every line: W202).
  out.required = ExtractRequiredLiterals(pattern, /*case_classes=*/true);
  if (!out.required.empty()) {
    out.expanded = ExtractExpandedLiteralSets(pattern);
    return out;
  }
  std::vector<std::vector<RequiredLiteral>> expanded =
      ExtractExpandedLiteralSets(pattern, /*min_bytes=*/3);
  if (!expanded.empty()) {
    out.required = std::move(expanded.front());
    expanded.erase(expanded.begin());
    out.expanded = std::move(expanded);
  }
  return out;
}

std::string SerializeLiteralSnapshot(const std::vector<std::string>& patterns,
                                     std::string_view digest) {
  std::unordered_map<std::string_view, bool> seen;
  std::vector<std::string_view> unique;
  for (const std::string& p : patterns) {
    if (seen.emplace(p, true).second) unique.push_back(p);
  }
  ByteWriter w;
  w.U32(kLayout);
  w.Str(digest);
  w.U32(static_cast<std::uint32_t>(unique.size()));
  for (std::string_view pattern : unique) {
    const PatternLiterals lits = ExtractPatternLiterals(pattern);
    w.Str(pattern);
    WriteSet(w, lits.required);
    WriteSets(w, lits.confirm);
    WriteSets(w, lits.expanded);
    // Nested, so that Read can keep it unread (LiteralSnapshot::Alternatives).
    ByteWriter alternatives;
    WriteSets(alternatives, ExtractAlternativeLiteralSets(pattern));
    w.Str(alternatives.out);
  }
  return std::move(w.out);
}

std::optional<LiteralSnapshot> LiteralSnapshot::Read(std::string_view bytes) {
  ByteReader r(bytes);
  if (r.U32() != kLayout || !r.ok()) return std::nullopt;
  if (r.Str() != kLiteralCodeDigest || !r.ok()) return std::nullopt;
  LiteralSnapshot snapshot;
  for (std::uint32_t n = r.Count(); n > 0 && r.ok(); --n) {
    std::string pattern = r.Str();
    PatternLiterals lits;
    lits.required = ReadSet(r);
    lits.confirm = ReadSets(r);
    lits.expanded = ReadSets(r);
    const std::string_view alternatives = r.StrView();
    // Each pattern once: a repeat means the bytes are not what was written.
    if (!snapshot.by_pattern_.emplace(std::move(pattern), Entry{std::move(lits), alternatives})
             .second) {
      r.Fail();
    }
  }
  if (!r.done()) return std::nullopt;
  return snapshot;
}

const PatternLiterals* LiteralSnapshot::Find(std::string_view pattern) const {
  auto it = by_pattern_.find(std::string(pattern));
  return it != by_pattern_.end() ? &it->second.literals : nullptr;
}

std::optional<std::vector<std::vector<RequiredLiteral>>> LiteralSnapshot::Alternatives(
    std::string_view pattern) const {
  auto it = by_pattern_.find(std::string(pattern));
  if (it == by_pattern_.end()) return std::nullopt;
  ByteReader r(it->second.alternatives);
  std::vector<std::vector<RequiredLiteral>> sets = ReadSets(r);
  if (!r.done()) return std::nullopt;
  return sets;
}

}  // namespace faultline
