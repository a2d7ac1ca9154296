// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "collector/sources/checkpoint_store.h"
#include "collector/sources/cri_parser.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"
#include "collector/sources/wakeup.h"

namespace faultline {

// The pod a log directory belongs to: "<namespace>_<pod>_<uid>" (none of the
// three may contain '_': Kubernetes names are DNS labels/subdomains).
struct PodDir {
  std::string namespace_name;
  std::string pod;
  std::string uid;
};

// Pure. nullopt unless `name` has exactly three non-empty '_'-separated parts.
std::optional<PodDir> ParsePodDirName(std::string_view name);

// What a file in a container's log directory is to the tailer. Pure.
enum class PodLogFileKind {
  kCurrent,     // "<n>.log": the runtime writes here
  kRotated,     // "<n>.log.<YYYYMMDD-hhmmss>": renamed by kubelet; may still be written briefly
  kCompressed,  // "<n>.log.<YYYYMMDD-hhmmss>.gz": compressed by kubelet at the next rotation;
                // read only to finish a file the checkpoint says was not finished
  kIgnored,     // "*.tmp", anything else
};
PodLogFileKind ClassifyPodLogFile(std::string_view name);

// Tails the CRI log files kubelet keeps under
// <root>/<namespace>_<pod>_<uid>/<container>/<n>.log, joining P chunks up to
// their F chunk per (file, stream).
//
// Records: text = the joined line (invalid UTF-8 as \xNN), time = the CRI
// timestamp of its first chunk, origin pod, labels namespace, pod, uid,
// container, stream (and truncated=true when the cap cut it).
// Cursor: "<dev>:<inode>:<offset>" of the file the record came from, offset
// just after its F line; while a P chunk of the other stream is pending,
// "<dev>:<inode>:<offset of that chunk>:<offset after the F line>" (resume
// before the chunk, and still one distinct cursor per record; README).
//
// Files are tracked by (device, inode), not by name. Discovery rescans the
// root every `rescan_interval`: new pods and containers are picked up without
// restart; files that disappear are read to their end through the open
// descriptor and then forgotten. On kubelet's rotation (rename n.log to
// n.log.<stamp>, the runtime reopens n.log) the renamed inode stays tracked
// and is read to its end, including lines the runtime writes after the
// rename, and files of one container are read oldest first.
//
// Checkpoint: per inode, the offset after the newest committed record. On
// start a file resumes from its saved offset when its inode is in the
// checkpoint (and it is not shorter than that); otherwise it is read from the
// start (also when the inode was recycled: the checkpoint keeps a checksum of
// each file's first bytes), except that without any checkpoint (first start) rotated files are
// skipped: they hold history from before the agent was installed.
//
// Threading: as Source. stats() and the extra counters from any thread.
class PodLogSource final : public Source {
 public:
  struct Options {
    std::string root = "/var/log/pods";
    std::string state_dir;                            // empty: no checkpoint
    std::vector<std::string> include_namespaces;      // empty: every namespace
    std::vector<std::string> exclude_namespaces;      // wins over include
    std::chrono::milliseconds rescan_interval{2000};  // discovery of new/deleted files
    std::chrono::milliseconds read_interval{250};     // how often idle files are re-read
    std::size_t max_line_bytes = 256UL * 1024;        // cap of a joined P...F line
  };

  // kInvalidArgument: a bad option (zero intervals or cap). kResourceExhausted:
  // no eventfd. A missing root is not an error: pods may not exist yet.
  // `clock` (must outlive the source) times the rescans and idle re-reads.
  static Result<std::unique_ptr<PodLogSource>> Open(Options options,
                                                    const Clock& clock = RealClock());

  ~PodLogSource() override;
  PodLogSource(const PodLogSource&) = delete;
  PodLogSource& operator=(const PodLogSource&) = delete;

  std::string_view name() const override { return "podlog"; }
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view cursor) override;
  Status SaveCheckpoint() override;
  SourceStats stats() const override;

  // Joined lines cut at max_line_bytes.
  std::uint64_t truncated_lines() const { return truncated_.load(std::memory_order_relaxed); }

 private:
  friend struct PodLogSourceTesting;  // collector/sources/podlog_source_testing.h
  struct FileKey {
    dev_t dev = 0;
    ino_t ino = 0;
    // clang-tidy 14 reads the 0 a defaulted <=> compares with as a null pointer.
    // NOLINTNEXTLINE(modernize-use-nullptr)
    auto operator<=>(const FileKey&) const = default;
  };
  struct TrackedFile;

  PodLogSource(Options options, const Clock& clock);

  void LoadCheckpoint();
  void Scan();
  void Track(const std::string& path, const PodDir& pod, const std::string& container,
             PodLogFileKind kind);
  // First scan: a checkpointed inode no longer on disk. Its rest is read
  // from the .gz kubelet made of it, else counted in stats().lost.
  void RecoverMissing(const FileKey& key);
  // Reads and parses `f` until EOF or `out` holds `limit` records.
  // True at EOF.
  bool ReadFile(TrackedFile& f, std::vector<LogRecord>& out, std::size_t limit);
  // One CRI line of `f` ending (newline included) at `line_end`.
  void ParseLine(TrackedFile& f, std::string_view line, std::uint64_t line_start,
                 std::uint64_t line_end, std::vector<LogRecord>& out);
  // `limit` records, or the batch byte bound (Source::set_max_batch_bytes).
  bool BatchFull(const std::vector<LogRecord>& out, std::size_t limit) const;
  void Emit(TrackedFile& f, const JoinedLine& line, std::uint64_t end_offset,
            std::vector<LogRecord>& out);
  bool IncludeNamespace(std::string_view ns) const;

  Options options_;
  const Clock& clock_;
  StopWakeup wakeup_;
  CheckpointStore store_;

  std::map<FileKey, std::unique_ptr<TrackedFile>> files_;
  std::vector<TrackedFile*> order_;  // read order: per container dir, rotated oldest first
  std::size_t next_index_ = 0;       // in order_: where the next Read() begins
  struct SavedFile {
    std::uint64_t offset = 0;
    std::string head;  // fingerprint of the first bytes: tells a recycled inode apart
    std::string path;  // where it was at the save
    std::optional<std::uint64_t> size;  // its size at the save (absent in older checkpoints)
  };
  std::map<FileKey, SavedFile> saved_offsets_;  // from the checkpoint, until the first scan
  std::vector<FileKey> recycled_;  // first scan: checkpointed inodes now holding another file
  bool had_checkpoint_ = false;
  bool first_scan_done_ = false;
  std::chrono::steady_clock::time_point next_scan_{};
  std::map<FileKey, std::uint64_t> committed_;
  std::string saved_content_;
  std::size_t batch_bytes_ = 0;  // text appended by the current Read()

  SourceCounters counters_;  // stats(); added on the source's thread
  std::atomic<std::uint64_t> truncated_{0};
  std::atomic<std::size_t> tracked_{0};
};

}  // namespace faultline
