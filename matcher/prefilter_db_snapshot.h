// SPDX-License-Identifier: Apache-2.0
// The built-in packs' prefilter databases, compiled at build time: a scan
// compiled its static one on its first buffer, 47 M instructions (~5 ms)
// for their ~300 literals, paid by every `faultline scan` and every agent
// start, and a sampled scan (16 MiB or more) its sampler's, ~110 M
// (bench/README.md, issue 30). fl-snapshot-rules compiles the literals
// that RuleSet would search for, and those its sampler would count
// (sample_literals.h), with the built-in packs alone, and writes each
// database (hs_serialize_database) with the list it holds; a RuleSet that
// needs a database of exactly one of those lists, in that order, loads it
// instead of compiling.
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

// Each of `lists` and its LiteralPrefilter's database, in a private binary
// layout; a list Vectorscan refuses to build or serialize is left out
// (empty: all were).
std::string SerializePrefilterDbs(const std::vector<std::vector<RequiredLiteral>>& lists);

// The prefilter of `literals` from bytes SerializePrefilterDbs wrote, when
// they hold a database of exactly `literals` and this Vectorscan loads it;
// null otherwise (truncated or foreign bytes, no such list, refused).
std::unique_ptr<LiteralPrefilter> LoadPrefilterDb(std::string_view bytes,
                                                  const std::vector<RequiredLiteral>& literals);

// The databases fl-snapshot-rules embedded for the built-in packs (empty
// when the binary has none). Defined in the generated builtin_rule_packs.cc.
std::string_view BuiltinPrefilterDbBytes();

}  // namespace faultline
