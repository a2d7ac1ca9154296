// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/evidence_ring.h"

#include <algorithm>

#include "base/fault_event.h"

namespace faultline {

std::vector<std::string> EvidenceRing::Before(const std::vector<LogRecord>& batch,
                                              std::size_t index) const {
  if (max_lines_ == 0) return {};
  index = std::min(index, batch.size());
  const std::size_t from_batch = std::min(index, max_lines_);
  const std::size_t from_kept = std::min(kept_.size(), max_lines_ - from_batch);
  std::vector<std::string> lines;
  lines.reserve(from_kept + from_batch);
  lines.insert(lines.end(), kept_.end() - static_cast<std::ptrdiff_t>(from_kept), kept_.end());
  for (std::size_t i = index - from_batch; i < index; ++i) {
    lines.push_back(TruncateUtf8(batch[i].text, FaultEvent::kMaxEvidenceLineBytes));
  }
  return BoundEvidence(std::move(lines));
}

void EvidenceRing::Keep(const std::vector<LogRecord>& batch) {
  if (max_lines_ == 0) return;
  const std::size_t take = std::min(batch.size(), max_lines_);
  for (std::size_t i = batch.size() - take; i < batch.size(); ++i) {
    kept_.push_back(TruncateUtf8(batch[i].text, FaultEvent::kMaxEvidenceLineBytes));
  }
  while (kept_.size() > max_lines_) kept_.pop_front();
}

}  // namespace faultline
