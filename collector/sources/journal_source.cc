// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/journal_source.h"

#include <errno.h>
#include <time.h>

#include <chrono>
#include <cstring>

#include <nlohmann/json.hpp>
#include <systemd/sd-journal.h>

#include "base/log.h"
#include "collector/sources/journal_fields.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "journal";

// The fields AssembleJournalRecord() reads. Fetching these alone is cheaper
// than enumerating the thirty-odd fields of a typical entry.
constexpr const char* kFields[] = {"MESSAGE", "SYSLOG_IDENTIFIER", "_TRANSPORT", "_SYSTEMD_UNIT",
                                   "_PID",    "PRIORITY",          "_UID"};

std::string Errno(int negative_errno) { return std::strerror(-negative_errno); }

std::uint64_t ClockUsec(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

// Wall-clock time at which this machine booted. CLOCK_BOOTTIME counts
// suspend too, as the journal's realtime stamps do.
std::uint64_t BootRealtimeUsec() {
  const std::uint64_t now = ClockUsec(CLOCK_REALTIME);
  const std::uint64_t up = ClockUsec(CLOCK_BOOTTIME);
  return now > up ? now - up : 0;
}

std::string_view StartName(JournalSource::Start start) {
  switch (start) {
    case JournalSource::Start::kHead:
      return "head";
    case JournalSource::Start::kCurrentBoot:
      return "current-boot";
    case JournalSource::Start::kTail:
      return "tail";
  }
  return "?";
}

}  // namespace

Result<std::unique_ptr<JournalSource>> JournalSource::Open(Options options) {
  sd_journal* j = nullptr;
  int r = options.directory.empty() ? sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY)
                                    : sd_journal_open_directory(&j, options.directory.c_str(), 0);
  if (r < 0) {
    std::string what = options.directory.empty() ? "local journal" : options.directory;
    if (r == -ENOENT || r == -ENOTDIR || r == -EINVAL) {
      return InvalidArgumentError("journal: cannot open " + what + ": " + Errno(r));
    }
    return UnavailableError("journal: cannot open " + what + ": " + Errno(r));
  }
  std::unique_ptr<JournalSource> source(new JournalSource(std::move(options), j));
  FL_RETURN_IF_ERROR(source->wakeup_.status());
  FL_RETURN_IF_ERROR(source->AddMatches());

  // Long MESSAGE fields are the point of a fault line: return them whole
  // up to 1 MiB (the default threshold cuts compressed fields at 64 KiB).
  sd_journal_set_data_threshold(j, 1 << 20);

  // Asked for right after opening, as sd_journal_get_fd(3) recommends, so
  // that inotify watches every file from the start.
  source->journal_fd_ = sd_journal_get_fd(j);
  if (source->journal_fd_ < 0) {
    return UnavailableError("journal: sd_journal_get_fd: " + Errno(source->journal_fd_));
  }

  std::optional<std::string> cursor;
  Result<std::optional<std::string>> loaded = source->store_.Load();
  if (!loaded.ok()) {
    if (loaded.error().code() == StatusCode::kDataLoss) ++source->counters_.parse_errors;
    LogWarning(kComponent, "ignoring checkpoint",
               {{"path", source->store_.path()},
                {"error", loaded.error().message()},
                {"start", StartName(source->options_.start)}});
  } else if (loaded->has_value()) {
    nlohmann::json doc = nlohmann::json::parse(**loaded, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("cursor") && doc["cursor"].is_string()) {
      cursor = doc["cursor"].get<std::string>();
    } else {
      ++source->counters_.parse_errors;
      LogWarning(kComponent, "checkpoint has no cursor; ignoring it",
                 {{"path", source->store_.path()}, {"start", StartName(source->options_.start)}});
    }
  }
  source->Position(cursor);
  return source;
}

JournalSource::JournalSource(Options options, sd_journal* journal)
    : options_(std::move(options)), journal_(journal), store_(options_.state_dir, "journal") {}

JournalSource::~JournalSource() { sd_journal_close(journal_); }

Status JournalSource::AddMatches() {
  // Matches on one field are ORed by sd_journal; the conjunction between
  // kinds makes the AND explicit: (unit=a OR unit=b) AND (transport=x).
  const std::pair<const char*, const std::vector<std::string>*> kinds[] = {
      {"_SYSTEMD_UNIT=", &options_.units},
      {"SYSLOG_IDENTIFIER=", &options_.identifiers},
      {"_TRANSPORT=", &options_.transports}};
  bool any = false;
  for (const auto& [prefix, values] : kinds) {
    if (values->empty()) continue;
    if (any) {
      int r = sd_journal_add_conjunction(journal_);
      if (r < 0) return InternalError("journal: sd_journal_add_conjunction: " + Errno(r));
    }
    for (const std::string& value : *values) {
      const std::string match = prefix + value;
      int r = sd_journal_add_match(journal_, match.data(), match.size());
      if (r < 0) return InvalidArgumentError("journal: bad match '" + match + "': " + Errno(r));
    }
    any = true;
  }
  return OkStatus();
}

void JournalSource::Position(const std::optional<std::string>& cursor) {
  if (cursor) {
    int r = sd_journal_seek_cursor(journal_, cursor->c_str());
    if (r >= 0) {
      resume_cursor_ = *cursor;
      last_read_cursor_ = committed_ = saved_ = *cursor;
      LogInfo(kComponent, "resuming after cursor", {{"cursor", *cursor}});
      return;
    }
    ++counters_.parse_errors;
    LogWarning(kComponent, "cannot seek to saved cursor; starting over",
               {{"cursor", *cursor}, {"error", Errno(r)}, {"start", StartName(options_.start)}});
  }
  SeekStart();
}

void JournalSource::SeekStart() {
  int r = 0;
  switch (options_.start) {
    case Start::kHead:
      r = sd_journal_seek_head(journal_);
      break;
    case Start::kCurrentBoot:
      r = sd_journal_seek_realtime_usec(journal_, BootRealtimeUsec());
      break;
    case Start::kTail:
      // seek_tail leaves the position after the end; previous() puts it on
      // the last entry so that the next next() returns the first new one.
      r = sd_journal_seek_tail(journal_);
      if (r >= 0) r = sd_journal_previous(journal_);
      break;
  }
  if (r < 0) {
    LogWarning(kComponent, "seek failed; reading from the head",
               {{"start", StartName(options_.start)}, {"error", Errno(r)}});
    sd_journal_seek_head(journal_);
  }
}

int JournalSource::Next() {
  for (;;) {
    int r = sd_journal_next(journal_);
    if (r < 0) {
      // fluent-bit's in_systemd re-seeks to the head here and logs "unread
      // logs are lost". Re-seek to the last entry read instead, and count it:
      // the journal cannot say how many entries the corrupt region held.
      ++counters_.lost;
      LogWarning(kComponent, "sd_journal_next failed; re-seeking to the last entry read",
                 {{"error", Errno(r)}, {"cursor", last_read_cursor_}});
      if (!last_read_cursor_.empty() &&
          sd_journal_seek_cursor(journal_, last_read_cursor_.c_str()) >= 0) {
        resume_cursor_ = last_read_cursor_;
      } else {
        SeekStart();
      }
      return r;
    }
    if (r == 0) return 0;
    if (resume_cursor_) {
      const int t = sd_journal_test_cursor(journal_, resume_cursor_->c_str());
      resume_cursor_.reset();
      // > 0: this is the entry already handled; skip it. 0: it is gone and
      // this is the next newer one; read it (previous() would lose one).
      if (t > 0) continue;
    }
    return 1;
  }
}

Status JournalSource::Wait(std::stop_token stop) {
  // sd_journal may ask to be woken by a deadline (it falls back to polling
  // files inotify cannot watch); otherwise wake at least once a second.
  std::chrono::milliseconds timeout(1000);
  std::uint64_t until = 0;
  if (sd_journal_get_timeout(journal_, &until) >= 0 && until != UINT64_MAX) {
    const std::uint64_t now = ClockUsec(CLOCK_MONOTONIC);
    const auto left = std::chrono::milliseconds(until > now ? (until - now + 999) / 1000 : 0);
    if (left < timeout) timeout = left;
  }
  Result<WaitOutcome> w = WaitReadable(journal_fd_, wakeup_, stop, timeout);
  if (!w.ok()) return w.error();
  if (*w == WaitOutcome::kStopped) return OkStatus();
  const int r = sd_journal_process(journal_);
  if (r < 0) return UnavailableError("journal: sd_journal_process: " + Errno(r));
  if (r == SD_JOURNAL_INVALIDATE) {
    // Files were added or removed (rotation, vacuum). sd_journal keeps its
    // position across this; the next next() continues from it.
    LogDebug(kComponent, "journal files changed");
  }
  return OkStatus();
}

Status JournalSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                           std::stop_token stop) {
  std::size_t added = 0;
  std::size_t added_bytes = 0;
  while (added < max_records && !BatchBytesReached(added_bytes)) {
    if (stop.stop_requested()) return OkStatus();
    const int r = Next();
    if (r < 0) {
      if (added > 0) return OkStatus();
      return UnavailableError("journal: sd_journal_next: " + Errno(r));
    }
    if (r == 0) {
      if (added > 0) return OkStatus();
      FL_RETURN_IF_ERROR(Wait(stop));
      continue;
    }

    char* raw_cursor = nullptr;
    int c = sd_journal_get_cursor(journal_, &raw_cursor);
    if (c < 0) {
      // Without a cursor the entry cannot be committed; it is skipped.
      ++counters_.parse_errors;
      LogDebug(kComponent, "sd_journal_get_cursor failed", {{"error", Errno(c)}});
      continue;
    }
    std::string cursor(raw_cursor);
    free(raw_cursor);  // NOLINT(cppcoreguidelines-no-malloc): libsystemd allocates it
    last_read_cursor_ = cursor;

    JournalEntry entry;
    for (const char* field : kFields) {
      const void* data = nullptr;
      std::size_t length = 0;
      if (sd_journal_get_data(journal_, field, &data, &length) >= 0) {
        AddJournalField(std::string_view(static_cast<const char*>(data), length), entry);
      }
    }
    if (options_.skip_kernel_transport) {
      auto it = entry.fields.find("_TRANSPORT");
      if (it != entry.fields.end() && it->second == "kernel") {
        ++skipped_kernel_;
        continue;
      }
    }
    sd_journal_get_realtime_usec(journal_, &entry.realtime_usec);

    LogRecord record = AssembleJournalRecord(entry);
    record.cursor = std::move(cursor);
    ++counters_.records;
    counters_.bytes += record.text.size();
    added_bytes += record.text.size();
    out.push_back(std::move(record));
    ++added;
  }
  return OkStatus();
}

void JournalSource::Commit(std::string_view cursor) {
  if (!cursor.empty()) committed_.assign(cursor);
}

Status JournalSource::SaveCheckpoint() {
  if (committed_ == saved_) return OkStatus();
  nlohmann::json doc = {{"cursor", committed_}};
  FL_RETURN_IF_ERROR(store_.Save(doc.dump()));
  saved_ = committed_;
  return OkStatus();
}

SourceStats JournalSource::stats() const { return counters_.Snapshot(); }

}  // namespace faultline
