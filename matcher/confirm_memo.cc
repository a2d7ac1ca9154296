// SPDX-License-Identifier: Apache-2.0
#include "matcher/confirm_memo.h"

#include <atomic>
#include <cstring>
#include <memory>

namespace faultline {

std::uint64_t MemoText::hash() const {
  if (hashed_) return hash_;
  // Eight bytes a step: the hash only spreads texts over slots (the bytes
  // decide a hit), so speed matters more than its quality.
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = text_.size() * kMul;
  const char* p = text_.data();
  std::size_t left = text_.size();
  for (; left >= 8; p += 8, left -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  if (left > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, p, left);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  hash_ = h;
  hashed_ = true;
  return h;
}

std::uint64_t ConfirmMemo::NewOwner() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// The memo `slot` holds, made on first use: on the heap (~340 KiB) and
// default-initialised (make_unique_for_overwrite), not make_unique's
// value-initialisation: that zeroed every slot's bytes first (a third of a
// MiB written per thread, 0.26 M instructions a scan); a slot's bytes are
// read only after a Store wrote them (an empty slot's owner, 0, matches no
// RuleSet). The analyzer takes the memo its callers return for one freed
// on an earlier path; it is the thread's own, freed only when the thread
// ends (hence their NOLINTs).
ConfirmMemo& MadeOnFirstUse(std::unique_ptr<ConfirmMemo>& slot) {
  if (!slot) slot = std::make_unique_for_overwrite<ConfirmMemo>();
  return *slot;
}

}  // namespace

ConfirmMemo& ConfirmMemo::ForThisThread() {
  // Made by the first confirmation of a thread.
  thread_local std::unique_ptr<ConfirmMemo> memo;
  return MadeOnFirstUse(memo);  // NOLINT(clang-analyzer-cplusplus.NewDelete)
}

ConfirmMemo& ConfirmMemo::ForSetsOfThisThread() {
  // Made by the first Set answer a thread asks for (only on threads that
  // run an origin's Set).
  thread_local std::unique_ptr<ConfirmMemo> memo;
  return MadeOnFirstUse(memo);  // NOLINT(clang-analyzer-cplusplus.NewDelete)
}

std::size_t ConfirmMemo::SetOf(std::uint64_t hash, std::uint32_t rule) {
  const std::uint64_t h = (hash ^ (std::uint64_t{rule} * 0xC2B2AE3D27D4EB4Full));
  return static_cast<std::size_t>((h ^ (h >> 32)) % kSets) * kWays;
}

bool ConfirmMemo::Usable(std::string_view text, std::size_t groups) {
  if (text.size() > kMaxTextBytes || groups > kMaxGroups) return false;
  if (off_for_ > 0) {
    --off_for_;
    return false;
  }
  return true;
}

const ConfirmMemo::Result* ConfirmMemo::Find(std::uint64_t owner, std::uint32_t rule,
                                             const MemoText& text) {
  ++lookups_;
  const std::uint64_t hash = text.hash();
  const std::string_view t = text.text();
  Slot* found = nullptr;
  for (std::size_t way = 0, first = SetOf(hash, rule); way < kWays; ++way) {
    Slot& s = slots_[first + way];
    if (s.owner == owner && s.rule == rule && s.hash == hash && s.size == t.size() &&
        std::memcmp(s.bytes.data(), t.data(), t.size()) == 0) {
      found = &s;
      break;
    }
  }
  if (found) {
    ++found->uses;
    ++hits_;
    ++window_hits_;
  }
  if (++window_lookups_ == kWindow) {
    if (window_hits_ * kMinHitShare < kWindow) off_for_ = kOffConfirmations;
    window_lookups_ = 0;
    window_hits_ = 0;
  }
  return found ? &found->result : nullptr;
}

void ConfirmMemo::Store(std::uint64_t owner, std::uint32_t rule, const MemoText& text,
                        const Result& result) {
  const std::string_view t = text.text();
  if (t.size() > kMaxTextBytes) return;
  Slot* set = &slots_[SetOf(text.hash(), rule)];
  // The way of another RuleSet or the less used; the other ages.
  const auto stale = [owner](const Slot& s) { return s.owner != owner; };
  std::size_t victim = 0;
  for (std::size_t way = 1; way < kWays; ++way) {
    const Slot& v = set[victim];
    const Slot& w = set[way];
    if (!stale(v) && (stale(w) || w.uses < v.uses)) victim = way;
  }
  for (std::size_t way = 0; way < kWays; ++way) set[way].uses >>= 1;
  Slot& s = set[victim];
  s.owner = owner;
  s.rule = rule;
  s.hash = text.hash();
  s.size = static_cast<std::uint16_t>(t.size());
  s.uses = 0;
  s.result = result;
  std::memcpy(s.bytes.data(), t.data(), t.size());
}

}  // namespace faultline
