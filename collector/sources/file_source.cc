// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/log.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "file";
constexpr std::size_t kChunk = std::size_t{64} * 1024;

Status OpenError(const std::string& path) {
  std::string m = "open " + path + ": " + std::strerror(errno);
  if (errno == ENOENT) return NotFoundError(std::move(m));
  if (errno == EACCES || errno == EPERM) return PermissionDeniedError(std::move(m));
  return UnavailableError(std::move(m));
}

// How much of a file's beginning the checkpoint fingerprints: inode numbers
// are reused, so (dev, inode) alone can mistake a new file for the old one.
constexpr std::size_t kHeadBytes = 256;

// FNV-1a of the first `len` bytes of `fd`; nullopt if they cannot be read.
std::optional<std::uint64_t> HeadHash(int fd, std::size_t len) {
  char head[kHeadBytes];
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd, head + got, len - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < len; ++i) {
    h ^= static_cast<unsigned char>(head[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// "<dev>:<inode>:<offset>" into `buf`; returns its length. Formatted on the
// stack: a cursor is made for every line.
constexpr std::size_t kCursorMax = 3 * 20 + 2;
std::size_t FormatCursor(char (&buf)[kCursorMax], std::uint64_t dev, std::uint64_t ino,
                         std::uint64_t offset) {
  char* p = std::to_chars(buf, buf + kCursorMax, dev).ptr;
  *p++ = ':';
  p = std::to_chars(p, buf + kCursorMax, ino).ptr;
  *p++ = ':';
  p = std::to_chars(p, buf + kCursorMax, offset).ptr;
  return static_cast<std::size_t>(p - buf);
}

}  // namespace

FileSource::FileSource(const Options& options, const Clock& clock)
    : options_(options),
      clock_(clock),
      stdin_(options.path == "-"),
      store_(options.path == "-" ? std::string() : options.state_dir, options.checkpoint_name),
      buffer_(kChunk, '\0') {}

FileSource::~FileSource() {
  if (fd_ >= 0 && !stdin_) ::close(fd_);
}

Result<std::unique_ptr<FileSource>> FileSource::Open(const Options& options, const Clock& clock) {
  if (options.path.empty()) return InvalidArgumentError("file source needs a path (or \"-\")");
  if (options.max_line_bytes == 0) return InvalidArgumentError("max_line_bytes must be positive");
  if (options.poll_interval.count() <= 0) {
    return InvalidArgumentError("poll_interval must be positive");
  }
  std::unique_ptr<FileSource> source(new FileSource(options, clock));
  FL_RETURN_IF_ERROR(source->wakeup_.status());
  Status opened = source->OpenFile(/*use_checkpoint=*/true);
  if (opened.code() == StatusCode::kNotFound && options.follow && !source->stdin_) {
    // tail -F: a log file that does not exist yet is waited for by Read().
    LogInfo(kComponent, "file does not exist yet: waiting for it", {{"file", options.path}});
    return source;
  }
  FL_RETURN_IF_ERROR(opened);
  return source;
}

Status FileSource::OpenFile(bool use_checkpoint) {
  int fd = stdin_ ? STDIN_FILENO : ::open(options_.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OpenError(options_.path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = UnavailableError("fstat " + options_.path + ": " + std::strerror(errno));
    if (!stdin_) ::close(fd);
    return s;
  }
  if (fd_ >= 0 && !stdin_) ::close(fd_);
  fd_ = fd;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  pos_ = 0;
  line_no_ = 0;
  line_.clear();
  line_bytes_ = 0;
  if (!use_checkpoint || stdin_) return OkStatus();

  Result<std::optional<std::string>> loaded = store_.Load();
  if (!loaded.ok()) {
    SourceCounters::Add(counters_.parse_errors);
    LogWarning(kComponent, "ignoring unusable checkpoint",
               {{"path", store_.path()}, {"error", loaded.error().ToString()}});
    return OkStatus();
  }
  if (!loaded->has_value()) return OkStatus();
  nlohmann::json j = nlohmann::json::parse(**loaded, nullptr, /*allow_exceptions=*/false);
  const bool shaped = j.is_object() && j.contains("dev") && j["dev"].is_number_unsigned() &&
                      j.contains("ino") && j["ino"].is_number_unsigned() && j.contains("offset") &&
                      j["offset"].is_number_unsigned();
  if (!shaped) {
    SourceCounters::Add(counters_.parse_errors);
    LogWarning(kComponent, "ignoring checkpoint that is not a file checkpoint",
               {{"path", store_.path()}});
    return OkStatus();
  }
  Position saved{
      j["dev"].get<std::uint64_t>(), j["ino"].get<std::uint64_t>(),
      j["offset"].get<std::uint64_t>(),
      j.contains("line") && j["line"].is_number_unsigned() ? j["line"].get<std::uint64_t>() : 0};
  saved_ = saved;
  committed_ = saved;
  if (saved.dev != dev_ || saved.ino != ino_) {
    LogInfo(kComponent, "file replaced since the checkpoint: reading it from the start",
            {{"file", options_.path}});
    return OkStatus();
  }
  if (saved.offset > static_cast<std::uint64_t>(st.st_size)) {
    LogInfo(kComponent, "file truncated since the checkpoint: reading it from the start",
            {{"file", options_.path}});
    return OkStatus();
  }
  if (j.contains("head_len") && j["head_len"].is_number_unsigned() && j.contains("head_hash") &&
      j["head_hash"].is_number_unsigned()) {
    const std::size_t len = std::min<std::uint64_t>(j["head_len"].get<std::uint64_t>(), kHeadBytes);
    if (HeadHash(fd_, len) != j["head_hash"].get<std::uint64_t>()) {
      LogInfo(kComponent,
              "inode reused by another file since the checkpoint: reading it from the start",
              {{"file", options_.path}});
      return OkStatus();
    }
  }
  if (::lseek(fd_, static_cast<off_t>(saved.offset), SEEK_SET) < 0) {
    return UnavailableError("lseek " + options_.path + ": " + std::strerror(errno));
  }
  pos_ = saved.offset;
  line_no_ = saved.line;
  return OkStatus();
}

void FileSource::Split(const char* data, std::size_t size) {
  const std::uint64_t start = pos_;
  std::size_t i = 0;
  while (i < size) {
    const void* nl = std::memchr(data + i, '\n', size - i);
    const std::size_t end =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) : size;
    const std::size_t piece = end - i;
    if (line_.size() < options_.max_line_bytes) {
      line_.append(data + i, std::min(piece, options_.max_line_bytes - line_.size()));
    }
    line_bytes_ += piece;
    if (!nl) break;
    EndLine(start + end + 1);
    i = end + 1;
  }
  pos_ = start + size;
}

void FileSource::EndLine(std::uint64_t end_offset) {
  ++line_no_;
  if (line_bytes_ > options_.max_line_bytes) {
    SourceCounters::Add(counters_.parse_errors);
  } else if (!line_.empty() && line_.back() == '\r') {
    line_.pop_back();
  }
  LogRecord& r = ready_.emplace_back();
  r.source = "file";
  r.origin = options_.origin;
  r.text = std::move(line_);
  r.time = clock_.Now();
  char cursor[kCursorMax];
  r.cursor.assign(cursor, FormatCursor(cursor, dev_, ino_, end_offset));
  char line_no[20];
  r.labels.emplace("file", options_.path);
  r.labels.emplace(
      "line", std::string(line_no, std::to_chars(line_no, line_no + sizeof line_no, line_no_).ptr));
  SourceCounters::Add(counters_.records);
  SourceCounters::Add(counters_.bytes, r.text.size());
  // The position alone identifies the cursor (Commit parses it back), so
  // no copy of the cursor string is kept per line in flight.
  if (!stdin_) {
    const bool continues =
        !in_flight_runs_.empty() && in_flight_runs_.back().dev == dev_ &&
        in_flight_runs_.back().ino == ino_ &&
        in_flight_runs_.back().first_line + in_flight_runs_.back().count == line_no_ &&
        in_flight_offsets_.back() < end_offset;
    if (!continues) in_flight_runs_.push_back({dev_, ino_, line_no_, 0});
    ++in_flight_runs_.back().count;
    in_flight_offsets_.push_back(end_offset);
  }
  line_.clear();
  line_bytes_ = 0;
}

Result<bool> FileSource::CheckRotation() {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < pos_) {
    LogInfo(kComponent, "file truncated: reading it from the start", {{"file", options_.path}});
    if (::lseek(fd_, 0, SEEK_SET) < 0) {
      return UnavailableError("lseek " + options_.path + ": " + std::strerror(errno));
    }
    pos_ = 0;
    line_no_ = 0;
    line_.clear();
    line_bytes_ = 0;
    return true;
  }
  struct stat now {};
  if (::stat(options_.path.c_str(), &now) != 0) return false;  // gone for now: wait
  if (static_cast<std::uint64_t>(now.st_dev) == dev_ &&
      static_cast<std::uint64_t>(now.st_ino) == ino_) {
    return false;
  }
  // Replaced (rotated). The old file has been read to its end: its last
  // line, even without a newline, is complete now.
  if (line_bytes_ > 0) EndLine(pos_);
  LogInfo(kComponent, "file replaced: following the new one", {{"file", options_.path}});
  Status s = OpenFile(/*use_checkpoint=*/false);
  if (!s.ok()) return s.code() == StatusCode::kNotFound ? Result<bool>(false) : Result<bool>(s);
  return true;
}

Status FileSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                        std::stop_token stop) {
  std::size_t appended = 0;
  std::size_t appended_bytes = 0;
  for (;;) {
    while (!ready_.empty() && appended < max_records && !BatchBytesReached(appended_bytes)) {
      appended_bytes += ready_.front().text.size();
      out.push_back(std::move(ready_.front()));
      ready_.pop_front();
      ++appended;
    }
    if (!ready_.empty() || appended >= max_records || BatchBytesReached(appended_bytes)) {
      return OkStatus();
    }
    if (at_eof_) return OutOfRangeError("end of " + options_.path);
    if (appended > 0 || stop.stop_requested()) return OkStatus();

    if (fd_ < 0) {
      // Following a file that did not exist at Open(): the checkpoint, if
      // any, is checked against it when it appears.
      Status opened = OpenFile(/*use_checkpoint=*/true);
      if (opened.ok()) continue;
      if (opened.code() != StatusCode::kNotFound) return opened;
      Result<WaitOutcome> w = WaitReadable(-1, wakeup_, stop, options_.poll_interval);
      if (!w.ok()) return w.error();
      if (*w == WaitOutcome::kStopped) return OkStatus();
      continue;
    }
    if (stdin_) {
      // A pipe may block: wait for it with the stop wakeup.
      Result<WaitOutcome> w = WaitReadable(fd_, wakeup_, stop, std::chrono::milliseconds(-1));
      if (!w.ok()) return w.error();
      if (*w == WaitOutcome::kStopped) return OkStatus();
    }
    ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return UnavailableError("read " + options_.path + ": " + std::strerror(errno));
    }
    if (n > 0) {
      Split(buffer_.data(), static_cast<std::size_t>(n));
      continue;
    }
    // End of file.
    if (!options_.follow || stdin_) {
      if (line_bytes_ > 0) EndLine(pos_);
      at_eof_ = true;
      continue;
    }
    Result<bool> more = CheckRotation();
    if (!more.ok()) return more.error();
    if (*more || !ready_.empty()) continue;
    Result<WaitOutcome> w = WaitReadable(-1, wakeup_, stop, options_.poll_interval);
    if (!w.ok()) return w.error();
    if (*w == WaitOutcome::kStopped) return OkStatus();
  }
}

void FileSource::Commit(std::string_view cursor) {
  // Commits come in Read() order: everything up to this cursor is done.
  // An unknown cursor (not ours) changes nothing. Ours are exactly
  // FormatCursor() of a position, so one that does not format back is not.
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t offset = 0;
  const char* p = cursor.data();
  const char* end = p + cursor.size();
  for (std::uint64_t* field : {&dev, &ino, &offset}) {
    auto [next, ec] = std::from_chars(p, end, *field);
    if (ec != std::errc()) return;
    p = next;
    if (field != &offset) {
      if (p == end || *p != ':') return;
      ++p;
    }
  }
  char formatted[kCursorMax];
  if (cursor != std::string_view(formatted, FormatCursor(formatted, dev, ino, offset))) return;

  std::size_t base = 0;  // index in in_flight_offsets_ of the run's first entry
  for (std::size_t r = 0; r < in_flight_runs_.size(); base += in_flight_runs_[r].count, ++r) {
    InFlightRun& run = in_flight_runs_[r];
    if (run.dev != dev || run.ino != ino) continue;
    // Offsets rise within a run: binary search.
    const auto first = in_flight_offsets_.begin() + static_cast<std::ptrdiff_t>(base);
    const auto last = first + static_cast<std::ptrdiff_t>(run.count);
    const auto it = std::lower_bound(first, last, offset);
    if (it == last || *it != offset) continue;
    const auto k = static_cast<std::size_t>(it - first);  // index within the run
    committed_ = Position{dev, ino, offset, run.first_line + k};
    in_flight_offsets_.erase(in_flight_offsets_.begin(), it + 1);
    run.first_line += k + 1;
    run.count -= k + 1;
    const std::size_t drop = r + (run.count == 0 ? 1 : 0);
    in_flight_runs_.erase(in_flight_runs_.begin(),
                          in_flight_runs_.begin() + static_cast<std::ptrdiff_t>(drop));
    return;
  }
}

Status FileSource::SaveCheckpoint() {
  if (stdin_ || !committed_ || committed_ == saved_) return OkStatus();
  nlohmann::json j = {{"dev", committed_->dev},
                      {"ino", committed_->ino},
                      {"offset", committed_->offset},
                      {"line", committed_->line}};
  // The fingerprint is only taken while the committed file is still open.
  if (committed_->dev == dev_ && committed_->ino == ino_) {
    const std::size_t len = std::min<std::uint64_t>(committed_->offset, kHeadBytes);
    if (std::optional<std::uint64_t> h = HeadHash(fd_, len)) {
      j["head_len"] = len;
      j["head_hash"] = *h;
    }
  }
  FL_RETURN_IF_ERROR(store_.Save(j.dump()));
  saved_ = committed_;
  return OkStatus();
}

}  // namespace faultline
