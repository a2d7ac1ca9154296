// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "collector/sources/checkpoint_store.h"
#include "collector/sources/ibcounters_diff.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"
#include "collector/sources/wakeup.h"

namespace faultline {

// Polls the InfiniBand port state and error counters in sysfs (layout in
// ibcounters_diff.h) and turns every change into a record that rules match
// like any log line: "mlx5_0 port 1 state ACTIVE -> DOWN",
// "mlx5_0 port 1 link_downed +1 (total 4)" (all texts: DiffIbSnapshots()).
// Records: source "ibcounters", origin ibcounters, labels device, port,
// counter ("state", "phys_state", a counter name, or "port"); time = the
// poll's wall-clock time.
//
// Baseline and restart: the checkpoint (state_dir/ibcounters.checkpoint)
// holds the last snapshot whose records were all committed. With one, the
// first poll diffs against it, so changes made while the agent was down are
// reported. Without one, Open() takes the baseline and reports only ports
// that are already not ACTIVE ("... state DOWN at start"), once. A counter
// that decreases (reset) becomes the new baseline silently. Ports that
// appear or disappear are reported. No InfiniBand devices is not an error:
// the source polls an empty tree.
//
// Cursor: "<sequence>:<index>:<fingerprint of the text>". The sequence
// numbers the polls that found changes and is kept in the checkpoint, so a
// record re-sent after a restart has the same cursor (and event id) and a
// new one never reuses an old one's.
// Thread-safety: as Source. Counted in stats(): records, bytes, parse_errors
// (a sysfs value that could not be parsed; the port keeps its old value).
class IbCountersSource final : public Source {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    std::chrono::milliseconds interval{10'000};  // between two polls
    std::string state_dir;                       // empty: no checkpoint
  };

  // Loads the checkpoint (a corrupt or foreign one is logged and ignored) or
  // takes the baseline. kInvalidArgument: interval <= 0.
  // kResourceExhausted: no eventfd. `clock` must outlive the source.
  static Result<std::unique_ptr<IbCountersSource>> Open(const Options& options,
                                                        const Clock& clock = RealClock());

  // Source
  std::string_view name() const override { return "ibcounters"; }
  // Polls at once on the first call, then every `interval` (an
  // interruptible wait); returns as soon as a poll produced records.
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view cursor) override;
  Status SaveCheckpoint() override;
  SourceStats stats() const override { return counters_.Snapshot(); }

 private:
  // A poll's snapshot, held until all of its records are committed.
  struct Generation {
    std::uint64_t number = 0;
    IbSnapshot snapshot;
    std::size_t uncommitted = 0;
  };

  IbCountersSource(const Options& options, const Clock& clock);
  void Poll();
  void Publish(const IbSnapshot& snapshot, const std::vector<IbChange>& changes);
  void Advance();

  const Options options_;
  const Clock& clock_;
  CheckpointStore store_;
  StopWakeup wakeup_;
  SourceCounters counters_;

  IbSnapshot last_;                       // the newest poll
  std::uint64_t sequence_ = 0;            // number of the newest poll that found changes
  std::uint64_t committed_sequence_ = 0;  // saved with committed_
  bool poll_now_ = true;                  // the first Read polls without waiting
  std::deque<LogRecord> ready_;           // made by a poll, not yet returned by Read()
  std::deque<Generation> in_flight_;
  std::optional<IbSnapshot> committed_;  // newest snapshot with all records committed
  bool dirty_ = false;                   // committed_ not yet saved
};

}  // namespace faultline
