// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "base/log_record.h"

namespace faultline {

// The last lines one source read, kept so that a tainting event can carry
// the lines just before its own (FaultEvent::evidence): the AER lines before
// an Xid 79, the NCCL lines before a watchdog timeout.
//
// The pipeline already holds a whole batch of records while it matches it,
// so only the tail of each finished batch is copied here (Keep): at most
// `lines` strings per batch, never one per record. Each kept line is cut to
// FaultEvent::kMaxEvidenceLineBytes, so the ring holds at most
// lines * 512 bytes of text per source.
//
// Not thread-safe: the pipeline's match thread owns one per source.
class EvidenceRing {
 public:
  explicit EvidenceRing(std::size_t lines) : max_lines_(lines) {}

  // The lines before batch[index]: the kept ones from earlier batches, then
  // batch[0..index), the newest `lines` of them, within FaultEvent's bounds.
  std::vector<std::string> Before(const std::vector<LogRecord>& batch, std::size_t index) const;

  // Keeps the last lines of a batch that has been matched.
  void Keep(const std::vector<LogRecord>& batch);

 private:
  std::size_t max_lines_;
  std::deque<std::string> kept_;  // oldest first, at most max_lines_
};

}  // namespace faultline
