// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collector/sources/checkpoint_store.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"
#include "collector/sources/wakeup.h"

struct sd_journal;

namespace faultline {

// Reads the systemd journal with libsystemd's sd_journal and follows it
// (sd_journal_get_fd + poll + sd_journal_process), resuming after a restart
// exactly after the last committed entry.
//
// Records: text "SYSLOG_IDENTIFIER: MESSAGE" (see AssembleJournalRecord),
// origin kernel for _TRANSPORT=kernel else journal, labels unit, identifier,
// pid, transport, priority; cursor = sd_journal_get_cursor() of the entry.
//
// Position at start:
//   - a checkpoint with a cursor: seek_cursor, next, test_cursor; > 0 means we
//     are on the committed entry, which is skipped; 0 means it is gone
//     (vacuumed or rotated away) and we are on the next newer entry, which is
//     read (never previous(): that loses an entry);
//   - no checkpoint, or a malformed/corrupt one (logged, counted as a parse
//     error): Options::start.
//
// Errors from sd_journal_next() are logged, counted in stats().lost (one per
// occurrence: the journal cannot tell how many entries it skipped) and
// followed by a re-seek to the last entry read.
//
// Threading: as Source. stats() and skipped_kernel() from any thread.
class JournalSource final : public Source {
 public:
  // Where to begin when there is no usable cursor.
  enum class Start {
    kHead,         // the oldest entry in the journal (may be years of history)
    kCurrentBoot,  // the first entry written since this machine booted (default):
                   // faults logged before the agent started are found, old
                   // boots are not re-reported
    kTail,         // only entries written after the source opened
  };

  struct Options {
    std::string directory;  // empty: the local journal (sd_journal_open(SD_JOURNAL_LOCAL_ONLY))
    std::string state_dir;  // empty: no checkpoint (always starts per `start`)
    // Matches: OR within a kind, AND across kinds; an empty kind matches all.
    std::vector<std::string> units;        // _SYSTEMD_UNIT=
    std::vector<std::string> identifiers;  // SYSLOG_IDENTIFIER=
    std::vector<std::string> transports;   // _TRANSPORT=
    // Drop _TRANSPORT=kernel entries (in code: matches cannot be negated).
    // Set when the kmsg source is on, or every kernel fault is seen twice.
    bool skip_kernel_transport = false;
    Start start = Start::kCurrentBoot;
  };

  // Opens the journal and positions it. kInvalidArgument: a match is not
  // "printable" for sd_journal (e.g. contains '\0') or the directory cannot
  // be opened; kUnavailable: libsystemd failed otherwise; kResourceExhausted:
  // no eventfd.
  static Result<std::unique_ptr<JournalSource>> Open(Options options);

  ~JournalSource() override;
  JournalSource(const JournalSource&) = delete;
  JournalSource& operator=(const JournalSource&) = delete;

  std::string_view name() const override { return "journal"; }
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view cursor) override;
  Status SaveCheckpoint() override;
  SourceStats stats() const override;

  // Entries dropped by skip_kernel_transport.
  std::uint64_t skipped_kernel() const { return skipped_kernel_.load(std::memory_order_relaxed); }

 private:
  JournalSource(Options options, sd_journal* journal);

  Status AddMatches();
  void Position(const std::optional<std::string>& cursor);
  void SeekStart();
  // One sd_journal_next(); handles the resume check and errors.
  // Returns 1 on an entry, 0 at the end, < 0 after a handled error.
  int Next();
  Status Wait(std::stop_token stop);

  Options options_;
  sd_journal* journal_;
  int journal_fd_ = -1;
  StopWakeup wakeup_;
  CheckpointStore store_;

  std::optional<std::string> resume_cursor_;  // test_cursor() on the next entry
  std::string last_read_cursor_;              // re-seek target after an error
  std::string committed_;
  std::string saved_;

  SourceCounters counters_;  // stats(); added on the source's thread
  std::atomic<std::uint64_t> skipped_kernel_{0};
};

}  // namespace faultline
