// SPDX-License-Identifier: Apache-2.0
#include "matcher/prefilter_db_snapshot.h"

#include <cstdint>

#include "matcher/snapshot_bytes.h"

namespace faultline {
namespace {

// Bumped whenever this layout changes; also refuses bytes that are not a
// prefilter database snapshot at all.
constexpr std::uint32_t kLayout = 0x464c4402;  // "FLD" 2

}  // namespace

std::string SerializePrefilterDbs(const std::vector<std::vector<RequiredLiteral>>& lists) {
  ByteWriter entries;
  std::uint32_t count = 0;
  for (const std::vector<RequiredLiteral>& literals : lists) {
    // For any CPU: the machine that runs the binary need not be the one
    // that built it (nor valgrind's, which has no AVX-512).
    auto built = LiteralPrefilter::Build(literals, /*any_cpu=*/true);
    if (!built.ok()) continue;
    const std::string db = (*built)->Serialize();
    if (db.empty()) continue;
    entries.U32(static_cast<std::uint32_t>(literals.size()));
    for (const RequiredLiteral& lit : literals) {
      entries.Str(lit.text);
      entries.Bool(lit.caseless);
    }
    entries.Str(db);
    ++count;
  }
  if (count == 0) return {};
  ByteWriter w;
  w.U32(kLayout);
  w.U32(count);
  return w.out + entries.out;
}

std::unique_ptr<LiteralPrefilter> LoadPrefilterDb(std::string_view bytes,
                                                  const std::vector<RequiredLiteral>& literals) {
  if (bytes.empty()) return nullptr;
  ByteReader r(bytes);
  if (r.U32() != kLayout) return nullptr;
  const std::uint32_t entries = r.Count();
  std::string_view found;  // the database of `literals`
  for (std::uint32_t e = 0; e < entries && r.ok(); ++e) {
    const std::uint32_t count = r.Count();
    // Compared as read; every entry is read to the end, so that bytes
    // truncated or extended anywhere are refused whole.
    bool same = count == literals.size();
    for (std::uint32_t i = 0; i < count && r.ok(); ++i) {
      const std::string_view text = r.StrView();
      const bool caseless = r.Bool();
      same = same && text == literals[i].text && caseless == literals[i].caseless;
    }
    const std::string_view db = r.StrView();
    if (same && found.empty()) found = db;
  }
  if (!r.done() || found.empty()) return nullptr;
  auto loaded = LiteralPrefilter::Deserialize(found, static_cast<unsigned>(literals.size()));
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

}  // namespace faultline
