// SPDX-License-Identifier: Apache-2.0
// The built-in rule packs, parsed at build time: a parsed RulePack (and the
// diagnostics its parse gave) written as bytes, so that a start-up reads the
// packs without parsing their YAML (yaml-cpp took ~230 M instructions, 60%
// of a `faultline scan` start; bench/README.md, issue 30).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/diagnostics.h"
#include "matcher/rule_pack.h"
#include "matcher/rule_set.h"

namespace faultline {

// One pack as parsed from its YAML, with what the parse reported.
struct ParsedPack {
  RulePack pack;
  Diagnostics diags;
};

// Every field of the pack and its diagnostics, in a private binary layout
// that only this build reads (the snapshot is made by the same sources).
std::string SerializeParsedPack(const ParsedPack& parsed);

// The pack back, equal field for field; nullopt when the bytes are not a
// whole snapshot (truncated, or of another layout): the caller then parses
// the YAML instead. Never reads out of bounds.
std::optional<ParsedPack> DeserializeParsedPack(std::string_view bytes);

// A built-in pack: from its snapshot, else (none, or not readable) parsed
// from its text as any pack is. The same pack and diagnostics either way.
ParsedPack ReadBuiltinPack(const RulePackText& builtin);

}  // namespace faultline
