// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "collector/sources/boot_id.h"
#include "collector/sources/checkpoint_store.h"
#include "collector/sources/kmsg_device.h"
#include "collector/sources/kmsg_record.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"
#include "collector/sources/wakeup.h"

namespace faultline {

// Reads the kernel log from /dev/kmsg (the record format is documented in
// kmsg_record.h). Each record becomes a LogRecord with source "kmsg", origin
// kernel, the message as text, the wall-clock time of the record
// (realtime_now - (monotonic_now - record_timestamp)) and labels priority,
// facility, sequence (decimal numbers), plus subsystem and device when the
// kernel attached them.
//
// Cursor: "<boot_id>:<sequence>". Checkpoint (state_dir/kmsg.checkpoint):
// {"boot_id": "...", "seq": N}, the last committed sequence.
//
// Where it starts:
//   - a checkpoint of this boot: at the oldest record in the ring, skipping
//     every record up to and including the saved sequence. If the ring no
//     longer holds the record after it, the gap is lost (see below);
//   - a checkpoint of another boot: the whole ring, from the oldest record,
//     so faults logged before the agent started are found;
//   - no (usable) checkpoint: per Options::start_policy. A corrupt or foreign
//     checkpoint is logged as a warning and ignored.
//
// Lost records: when the ring overwrites records before they are read
// (read(2) fails with EPIPE) or the sequence jumps, the gap is added to
// stats().lost and a synthetic record is returned before the next real one:
// origin kernel, text exactly
//   "faultline: kmsg ring buffer overrun: N records lost"
// and labels sequence (the last lost sequence, which is also its cursor) and
// lost (N). It is never silent.
//
// Thread-safety: as Source. Ownership: owns the device fd and an eventfd.
class KmsgSource final : public Source {
 public:
  enum class StartPolicy {
    kWholeRing,  // from the oldest record still in the ring (the default)
    kEnd,        // only records written after Open()
  };

  struct Options {
    std::string device_path = "/dev/kmsg";
    std::string state_dir;  // empty: no checkpoint is loaded or saved
    std::string boot_id_path = kBootIdPath;
    StartPolicy start_policy = StartPolicy::kWholeRing;  // used only without a checkpoint
  };

  // Reads the boot id, opens the device and positions it (see above).
  // kNotFound / kPermissionDenied / kUnavailable: the device or the boot id
  // file could not be opened or read (see OpenKmsgDevice()).
  // kResourceExhausted: no eventfd. `clock` must outlive the source.
  static Result<std::unique_ptr<KmsgSource>> Open(const Options& options,
                                                  const Clock& clock = RealClock());

  // The same with a given device (tests use a scripted fake);
  // options.device_path is then only used in log lines.
  static Result<std::unique_ptr<KmsgSource>> OpenWithDevice(const Options& options,
                                                            std::unique_ptr<KmsgDevice> device,
                                                            const Clock& clock = RealClock());

  // Source
  std::string_view name() const override { return "kmsg"; }
  // kUnavailable: read(2) failed with something other than EAGAIN/EPIPE.
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view cursor) override;
  Status SaveCheckpoint() override;
  SourceStats stats() const override { return counters_.Snapshot(); }

  const std::string& boot_id() const { return boot_id_; }

 private:
  KmsgSource(const Options& options, std::unique_ptr<KmsgDevice> device, std::string boot_id,
             const Clock& clock);

  Status Position();
  void Handle(const std::string& raw);
  void NoteParseError(const Status& error);

  const Options options_;
  std::unique_ptr<KmsgDevice> device_;
  const std::string boot_id_;
  const Clock& clock_;
  CheckpointStore store_;
  StopWakeup wakeup_;
  SourceCounters counters_;

  std::string raw_;                            // read buffer, reused
  std::deque<LogRecord> pending_;              // parsed, not yet returned by Read()
  std::optional<std::uint64_t> last_seq_;      // newest sequence seen on the device
  std::optional<std::uint64_t> resume_after_;  // from a checkpoint of this boot
  bool overrun_pending_ = false;               // EPIPE seen, gap not yet measured
  std::optional<std::uint64_t> committed_;     // newest committed sequence
  std::optional<std::uint64_t> saved_;         // what the checkpoint file holds
  std::uint64_t unlogged_parse_errors_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_parse_warning_;
};

}  // namespace faultline
