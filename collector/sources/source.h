// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/log_record.h"
#include "base/status.h"

namespace faultline {

// Counters every source keeps. Read from any thread (the metrics endpoint).
struct SourceStats {
  std::uint64_t records = 0;       // records returned by Read()
  std::uint64_t bytes = 0;         // bytes of text in them
  std::uint64_t parse_errors = 0;  // input that could not be parsed (skipped, counted)
  std::uint64_t lost = 0;          // records lost before they could be read (kmsg overrun, ...)
};

// A stream of log records from one place on the node: /dev/kmsg, the systemd
// journal, the pod log files under /var/log/pods, InfiniBand sysfs counters,
// or a plain file.
//
// Threading: the pipeline drives each Source from one thread of its own, so
// implementations need no locks for Read/Commit/SaveCheckpoint. Only `stop`
// comes from another thread: an implementation that blocks in poll(2) wakes
// on it through a std::stop_callback that writes to an eventfd it also polls.
// stats() may be called from any thread.
class Source {
 public:
  virtual ~Source() = default;

  // Short and stable, for logs, metrics and the checkpoint file name:
  // "kmsg", "journal", "podlog", "ibcounters", "file".
  virtual std::string_view name() const = 0;

  // Blocks until records are available (or `stop`), then appends at most
  // `max_records` of them to `out`. Once `stop` is requested, returns OK
  // promptly (within ~100 ms) with whatever it has, possibly nothing.
  //
  // kUnavailable: a transient I/O problem; the pipeline backs off and calls
  // again. kOutOfRange: a finite source (a file read without follow) is
  // exhausted; records appended in the same call are still valid. Any other
  // error ends this source; the agent keeps the others.
  virtual Status Read(std::vector<LogRecord>& out, std::size_t max_records,
                      std::stop_token stop) = 0;

  // The record with this cursor, and every record Read() returned before it,
  // has been handled (matched, and its events delivered). Called in the order
  // Read() returned the records, for every record (cheap: in memory only).
  // Takes effect on disk at the next SaveCheckpoint().
  virtual void Commit(std::string_view cursor) = 0;

  // Writes the committed position to the state directory atomically (write,
  // fsync, rename). A no-op for sources without a state directory.
  // kUnavailable: could not write; the old checkpoint is intact.
  virtual Status SaveCheckpoint() = 0;

  virtual SourceStats stats() const = 0;

  // Read() stops appending once the text of the records it appended in one
  // call reaches this many bytes (it appends at least one record): with long
  // lines, a batch of max_records would otherwise hold max_records times the
  // line cap. 0: no bound. Set by the pipeline before the first Read();
  // sources whose records are small (kmsg, ibcounters) may ignore it.
  void set_max_batch_bytes(std::size_t bytes) { max_batch_bytes_ = bytes; }

 protected:
  // True once `appended_bytes` of text in this Read() call reach the bound.
  bool BatchBytesReached(std::size_t appended_bytes) const {
    return max_batch_bytes_ != 0 && appended_bytes >= max_batch_bytes_;
  }

 private:
  std::size_t max_batch_bytes_ = 0;
};

}  // namespace faultline
