// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/vocabulary.h"
#include "collector/sources/checkpoint_store.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"
#include "collector/sources/wakeup.h"

namespace faultline {

// Reads a plain text file line by line, or standard input (path "-"): for
// `faultline scan`, tests, and logs that no other source covers.
//
// Records: source "file", origin Options::origin, the line without its "\n"
// (and without a "\r" before it), labels file (the path) and line (1-based,
// counted from where reading started: after a resume, from the checkpoint's
// line; after truncation or replacement, from 1 again); time = when read.
// A last line without a newline is returned at EOF when not following, and
// when following once the file has been replaced. Lines longer than
// max_line_bytes are cut to that length and counted in stats().parse_errors.
//
// Cursor: "<dev>:<inode>:<offset just after the line>". Checkpoint
// (state_dir/<checkpoint_name>.checkpoint): {"dev","ino","offset","line",
// "head_len","head_hash"}, the last a hash of the file's first (up to 256)
// bytes. On Open, a checkpoint for the same (dev, inode) and the same head
// resumes at its offset (or at 0 if the file is now shorter: truncated);
// one for another inode, or for a reused inode with another head (the file
// was replaced), starts at 0; a corrupt or foreign one is logged and
// ignored. Standard input never uses a checkpoint.
//
// follow = false: Read() returns kOutOfRange at end of file (records
// appended in that call are valid). follow = true: at EOF it waits for
// appends (re-checking every poll_interval, interruptibly); truncation
// (size < offset) restarts at 0; replacement (the path now names another
// inode: rotation) reads the old file to its end, then opens the new one.
// Standard input ends at EOF either way.
//
// Thread-safety: as Source. Owns the file descriptor (not stdin's).
class FileSource final : public Source {
 public:
  struct Options {
    std::string path;  // "-": standard input
    bool follow = false;
    // What rules' `sources:` see the lines as. kPod, the least trusted:
    // anyone may be able to write to a file, and `any` would let its lines
    // trigger kernel and journal taint rules. Say kKernel etc. explicitly.
    Origin origin = Origin::kPod;
    std::string state_dir;                 // empty: no checkpoint
    std::string checkpoint_name = "file";  // distinct per FileSource sharing a state_dir
    std::size_t max_line_bytes = 64UL * 1024;
    std::chrono::milliseconds poll_interval{200};  // follow: how often EOF is re-checked
  };

  // kNotFound / kPermissionDenied / kUnavailable: the file cannot be opened
  // (except kNotFound with follow: a file that does not exist yet is waited
  // for, like tail -F). kInvalidArgument: empty path, max_line_bytes == 0 or poll_interval <= 0.
  // `clock` must outlive the source.
  static Result<std::unique_ptr<FileSource>> Open(const Options& options,
                                                  const Clock& clock = RealClock());
  ~FileSource() override;

  // Source
  std::string_view name() const override { return "file"; }
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view cursor) override;
  Status SaveCheckpoint() override;
  SourceStats stats() const override { return counters_.Snapshot(); }

 private:
  struct Position {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t offset = 0;
    std::uint64_t line = 0;  // lines before `offset`
    bool operator==(const Position&) const = default;
  };

  FileSource(const Options& options, const Clock& clock);
  Status OpenFile(bool use_checkpoint);
  void Split(const char* data, std::size_t size);
  void EndLine(std::uint64_t end_offset);
  // At EOF while following: truncated or replaced? Returns true if reading
  // can continue at once.
  Result<bool> CheckRotation();

  const Options options_;
  const Clock& clock_;
  const bool stdin_;
  CheckpointStore store_;
  StopWakeup wakeup_;
  SourceCounters counters_;

  int fd_ = -1;
  std::uint64_t dev_ = 0;
  std::uint64_t ino_ = 0;
  std::uint64_t pos_ = 0;         // file offset of the next byte read
  std::uint64_t line_no_ = 0;     // lines completed in this file
  std::string line_;              // the current line so far, at most max_line_bytes
  std::uint64_t line_bytes_ = 0;  // its full length, including what was cut
  std::string buffer_;
  bool at_eof_ = false;  // finite input exhausted: kOutOfRange once drained

  std::deque<LogRecord> ready_;
  // Lines read and not yet committed, 8 bytes each (the flood holds up to
  // suppression_max_folded of them): each line's end offset, and the runs of
  // consecutive lines of one file, which give each line's dev, ino and
  // number. A new run starts when the file changes or restarts (rotation).
  struct InFlightRun {
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t first_line = 0;  // `line` of its first entry
    std::size_t count = 0;
  };
  std::deque<std::uint64_t> in_flight_offsets_;
  std::deque<InFlightRun> in_flight_runs_;
  std::optional<Position> committed_;
  std::optional<Position> saved_;
};

}  // namespace faultline
