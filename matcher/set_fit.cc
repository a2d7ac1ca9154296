// SPDX-License-Identifier: Apache-2.0
#include "matcher/set_fit.h"

#include "matcher/snapshot_bytes.h"

namespace faultline {
namespace {

constexpr std::uint32_t kLayout = 0x464c5301;  // "FLS" 1

}  // namespace

std::unique_ptr<RE2::Set> BuildPatternSet(const std::vector<std::string_view>& patterns,
                                          std::int64_t max_memory_bytes) {
  if (patterns.empty()) return nullptr;
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(max_memory_bytes);
  auto set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (std::string_view pattern : patterns) {
    std::string error;
    if (set->Add(re2::StringPiece(pattern.data(), pattern.size()), &error) < 0) return nullptr;
  }
  if (!set->Compile()) return nullptr;
  return set;
}

std::string SetFitProof::Prove(const std::vector<std::string_view>& patterns,
                               std::int64_t max_memory_bytes) {
  if (!BuildPatternSet(patterns, max_memory_bytes)) return {};
  ByteWriter w;
  w.U32(kLayout);
  w.I64(max_memory_bytes);
  w.U32(static_cast<std::uint32_t>(patterns.size()));
  for (std::string_view pattern : patterns) w.Str(pattern);
  return std::move(w.out);
}

std::optional<SetFitProof> SetFitProof::Read(std::string_view bytes) {
  ByteReader r(bytes);
  if (r.U32() != kLayout || !r.ok()) return std::nullopt;
  SetFitProof proof;
  proof.max_memory_bytes_ = r.I64();
  proof.patterns_.resize(r.Count());
  for (std::string& pattern : proof.patterns_) pattern = r.Str();
  if (!r.done() || proof.max_memory_bytes_ <= 0) return std::nullopt;
  return proof;
}

bool SetFitProof::Covers(const std::vector<std::string_view>& patterns,
                         std::int64_t max_memory_bytes) const {
  if (max_memory_bytes < max_memory_bytes_ || patterns.size() != patterns_.size()) return false;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i] != patterns_[i]) return false;
  }
  return true;
}

}  // namespace faultline
