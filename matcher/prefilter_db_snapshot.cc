// SPDX-License-Identifier: Apache-2.0
#include "matcher/prefilter_db_snapshot.h"

#include <cstdint>

#include "matcher/snapshot_bytes.h"

namespace faultline {
namespace {

// Bumped whenever this layout changes; also refuses bytes that are not a
// prefilter database snapshot at all.
constexpr std::uint32_t kLayout = 0x464c4401;  // "FLD" 1

}  // namespace

std::string SerializePrefilterDb(const std::vector<RequiredLiteral>& literals) {
  // For any CPU: the machine that runs the binary need not be the one
  // that built it (nor valgrind's, which has no AVX-512).
  auto built = LiteralPrefilter::Build(literals, /*any_cpu=*/true);
  if (!built.ok()) return {};
  const std::string db = (*built)->Serialize();
  if (db.empty()) return {};
  ByteWriter w;
  w.U32(kLayout);
  w.U32(static_cast<std::uint32_t>(literals.size()));
  for (const RequiredLiteral& lit : literals) {
    w.Str(lit.text);
    w.Bool(lit.caseless);
  }
  w.Str(db);
  return std::move(w.out);
}

std::unique_ptr<LiteralPrefilter> LoadPrefilterDb(std::string_view bytes,
                                                  const std::vector<RequiredLiteral>& literals) {
  ByteReader r(bytes);
  if (r.U32() != kLayout || r.Count() != literals.size() || !r.ok()) return nullptr;
  // Compared as read: a list that differs is refused at its first literal.
  for (const RequiredLiteral& lit : literals) {
    if (r.Str() != lit.text || r.Bool() != lit.caseless || !r.ok()) return nullptr;
  }
  const std::string db = r.Str();
  if (!r.done()) return nullptr;
  auto loaded = LiteralPrefilter::Deserialize(db, static_cast<unsigned>(literals.size()));
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

}  // namespace faultline
