// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collector/sources/kmsg_device.h"

namespace faultline {

// A scripted kernel ring for KmsgSource tests: a list of raw records and
// EPIPE events that ReadRecord() walks through; Rewind() goes back to the
// first entry, SeekToEnd() past the last. At the end it reports kAgain, and
// Wait() then blocks until stop (or the timeout), like an idle device, unless
// Ring::idle_is_stop says to return at once.
// The test keeps a shared_ptr to the Ring to add entries and look at calls.
class FakeKmsgDevice final : public KmsgDevice {
 public:
  struct Entry {
    ReadOutcome outcome = ReadOutcome::kRecord;
    std::string raw;
  };
  struct Ring {
    std::vector<Entry> entries;
    std::size_t pos = 0;
    int rewinds = 0;
    int seeks_to_end = 0;
    // When drained, Wait() reports kStopped at once instead of blocking, so
    // single-threaded tests can read "everything there is" without a stop.
    bool idle_is_stop = true;

    void Add(std::string raw) { entries.push_back({ReadOutcome::kRecord, std::move(raw)}); }
    void Overrun() { entries.push_back({ReadOutcome::kOverrun, ""}); }
    // "6,<seq>,<ts>,-;<text>\n", priority 6, facility 0.
    void AddText(std::uint64_t seq, const std::string& text, std::uint64_t ts_us = 1000) {
      Add("6," + std::to_string(seq) + "," + std::to_string(ts_us) + ",-;" + text + "\n");
    }
  };

  explicit FakeKmsgDevice(std::shared_ptr<Ring> ring) : ring_(std::move(ring)) {}

  Status Rewind() override {
    ++ring_->rewinds;
    ring_->pos = 0;
    return OkStatus();
  }
  Status SeekToEnd() override {
    ++ring_->seeks_to_end;
    ring_->pos = ring_->entries.size();
    return OkStatus();
  }
  Result<ReadOutcome> ReadRecord(std::string& record) override {
    if (ring_->pos >= ring_->entries.size()) return ReadOutcome::kAgain;
    const Entry& e = ring_->entries[ring_->pos++];
    record = e.raw;
    return e.outcome;
  }
  Result<WaitOutcome> Wait(const StopWakeup& wakeup, std::stop_token stop,
                           std::chrono::milliseconds timeout) override {
    if (ring_->pos < ring_->entries.size()) return WaitOutcome::kReady;
    if (ring_->idle_is_stop) return WaitOutcome::kStopped;
    return WaitReadable(-1, wakeup, stop, timeout);
  }

 private:
  std::shared_ptr<Ring> ring_;
};

}  // namespace faultline
