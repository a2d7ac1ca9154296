// SPDX-License-Identifier: Apache-2.0
// The built-in packs' prefilter database, compiled at build time: a scan
// compiled it on its first buffer, 50 M instructions (~5 ms) for their ~300
// literals, paid by every `faultline scan` and every agent start
// (bench/README.md, issue 30). fl-snapshot-rules compiles the literals that
// RuleSet would search for with the built-in packs alone and writes the
// database (hs_serialize_database) with the list it holds; a RuleSet whose
// prefilter holds exactly that list, in that order, loads it instead of
// compiling.
//
// Staleness: the list is compared whole, so other packs (a user's, an
// override, other options) compile their own; and Vectorscan refuses a
// database of another version or built for CPU features this one lacks
// (HS_DB_VERSION_ERROR, HS_DB_PLATFORM_ERROR): that start compiles it, as
// before. Never a different result, at worst the old cost.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "matcher/literal_prefilter.h"

namespace faultline {

// `literals` and their LiteralPrefilter's database in a private binary
// layout; empty if Vectorscan refuses to build or serialize them.
std::string SerializePrefilterDb(const std::vector<RequiredLiteral>& literals);

// The prefilter of `literals` from bytes SerializePrefilterDb wrote, when
// they were written for exactly `literals` and this Vectorscan loads them;
// null otherwise (truncated or foreign bytes, another list, refused).
std::unique_ptr<LiteralPrefilter> LoadPrefilterDb(std::string_view bytes,
                                                  const std::vector<RequiredLiteral>& literals);

// The database fl-snapshot-rules embedded for the built-in packs (empty
// when the binary has none). Defined in the generated builtin_rule_packs.cc.
std::string_view BuiltinPrefilterDbBytes();

}  // namespace faultline
