// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/podlog_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "collector/sources/journal_fields.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "podlog";
constexpr std::uint64_t kNone = UINT64_MAX;
constexpr std::size_t kChunk = 64UL * 1024;

std::size_t StreamIndex(CriStream s) { return s == CriStream::kStdout ? 0 : 1; }

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

constexpr std::size_t kHeadBytes = 256;

std::string Fingerprint(const char* data, std::size_t got) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < got; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return std::to_string(got) + ":" + std::to_string(h);
}

// "<length>:<FNV-1a of the first min(offset, 256) bytes>": identifies the file
// an inode held when the checkpoint was written. "" if it cannot be read.
std::string HeadFingerprint(int fd, std::uint64_t offset) {
  char data[kHeadBytes];
  const std::size_t want = offset < kHeadBytes ? static_cast<std::size_t>(offset) : kHeadBytes;
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd, data + got, want - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    got += static_cast<std::size_t>(n);
  }
  return Fingerprint(data, got);
}

// The same of a gzip file's decompressed content: a rotated file and its .gz
// have the same fingerprint.
std::string GzHeadFingerprint(const std::string& path, std::uint64_t offset) {
  char data[kHeadBytes];
  const std::size_t want = offset < kHeadBytes ? static_cast<std::size_t>(offset) : kHeadBytes;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return "";
  const int n = want == 0 ? 0 : gzread(gz, data, static_cast<unsigned>(want));
  gzclose(gz);
  if (n < 0 || static_cast<std::size_t>(n) != want) return "";
  return Fingerprint(data, want);
}

using LogFn = void (*)(std::string_view, std::string_view, const nlohmann::json&);
LogFn LogLevelFor(bool already_logged) { return already_logged ? &LogDebug : &LogWarning; }

struct DirEntry {
  std::string name;
  bool is_dir = false;
};

// readdir(3) rather than std::filesystem::directory_iterator: pods come and
// go while we list them, and the iterator's increment throws on errors.
std::vector<DirEntry> ListDir(const std::string& path) {
  std::vector<DirEntry> out;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): one DIR per call
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = stat((path + "/" + e->d_name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    out.push_back({std::string(n), is_dir});
  }
  closedir(dir);
  return out;
}

}  // namespace

std::optional<PodDir> ParsePodDirName(std::string_view name) {
  const std::size_t a = name.find('_');
  if (a == std::string_view::npos) return std::nullopt;
  const std::size_t b = name.find('_', a + 1);
  if (b == std::string_view::npos || name.find('_', b + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  PodDir d{std::string(name.substr(0, a)), std::string(name.substr(a + 1, b - a - 1)),
           std::string(name.substr(b + 1))};
  if (d.namespace_name.empty() || d.pod.empty() || d.uid.empty()) return std::nullopt;
  return d;
}

PodLogFileKind ClassifyPodLogFile(std::string_view name) {
  const std::size_t dot = name.find(".log");
  if (dot == std::string_view::npos || !AllDigits(name.substr(0, dot))) {
    return PodLogFileKind::kIgnored;
  }
  std::string_view rest = name.substr(dot + 4);
  if (rest.empty()) return PodLogFileKind::kCurrent;
  // ".YYYYMMDD-hhmmss" exactly; ".gz" and ".tmp" suffixes make it longer.
  const bool stamped = rest.size() >= 16 && rest[0] == '.' && AllDigits(rest.substr(1, 8)) &&
                       rest[9] == '-' && AllDigits(rest.substr(10, 6));
  if (stamped && rest.size() == 16) return PodLogFileKind::kRotated;
  if (stamped && rest.substr(16) == ".gz") return PodLogFileKind::kCompressed;
  return PodLogFileKind::kIgnored;
}

struct PodLogSource::TrackedFile {
  explicit TrackedFile(std::size_t max_line_bytes) : joiner(max_line_bytes) {}
  ~TrackedFile() {
    if (gz != nullptr) gzclose(gz);
    if (fd >= 0) ::close(fd);
  }
  TrackedFile(const TrackedFile&) = delete;
  TrackedFile& operator=(const TrackedFile&) = delete;

  FileKey key;
  std::string path;
  std::string sort_key;
  PodDir pod;
  std::string container;
  int fd = -1;
  gzFile gz = nullptr;             // a .gz: read through zlib (offsets are decompressed)
  std::uint64_t offset = 0;        // file offset of buf[0]
  std::uint64_t start_offset = 0;  // where this run began reading: the checkpoint until a commit
  std::string buf;                 // read, not yet parsed
  bool skip_to_newline = false;    // dropping the rest of an overlong line
  std::string overlong;            // that line's head, parsed once its newline is found
  std::uint64_t overlong_start = 0;
  PartialLineJoiner joiner;
  std::uint64_t pending_start[2] = {kNone, kNone};  // offset of each stream's first pending P
  bool present = true;                              // seen by the last scan
  bool drained = false;                             // gone from the directory and read to its end
  bool read_error_logged = false;                   // warned once about a failing read
};

Result<std::unique_ptr<PodLogSource>> PodLogSource::Open(Options options, const Clock& clock) {
  if (options.rescan_interval.count() <= 0 || options.read_interval.count() <= 0) {
    return InvalidArgumentError("podlog: rescan and read intervals must be positive");
  }
  if (options.max_line_bytes == 0) {
    return InvalidArgumentError("podlog: max_line_bytes must be positive");
  }
  std::unique_ptr<PodLogSource> source(new PodLogSource(std::move(options), clock));
  FL_RETURN_IF_ERROR(source->wakeup_.status());
  source->LoadCheckpoint();
  return source;
}

PodLogSource::PodLogSource(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), store_(options_.state_dir, "podlog") {}

PodLogSource::~PodLogSource() = default;

void PodLogSource::LoadCheckpoint() {
  Result<std::optional<std::string>> loaded = store_.Load();
  if (!loaded.ok()) {
    if (loaded.error().code() == StatusCode::kDataLoss) ++counters_.parse_errors;
    LogWarning(kComponent, "ignoring checkpoint",
               {{"path", store_.path()}, {"error", loaded.error().message()}});
    return;
  }
  if (!loaded->has_value()) return;
  nlohmann::json doc = nlohmann::json::parse(**loaded, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("files") || !doc["files"].is_array()) {
    ++counters_.parse_errors;
    LogWarning(kComponent, "checkpoint has no file list; ignoring it", {{"path", store_.path()}});
    return;
  }
  for (const nlohmann::json& f : doc["files"]) {
    if (!f.is_object() || !f.contains("dev") || !f.contains("ino") || !f.contains("offset") ||
        !f["dev"].is_number_unsigned() || !f["ino"].is_number_unsigned() ||
        !f["offset"].is_number_unsigned()) {
      ++counters_.parse_errors;
      continue;
    }
    FileKey key{static_cast<dev_t>(f["dev"].get<std::uint64_t>()),
                static_cast<ino_t>(f["ino"].get<std::uint64_t>())};
    SavedFile& saved = saved_offsets_[key];
    saved.offset = f["offset"].get<std::uint64_t>();
    if (f.contains("head") && f["head"].is_string()) saved.head = f["head"].get<std::string>();
    if (f.contains("path") && f["path"].is_string()) saved.path = f["path"].get<std::string>();
    if (f.contains("size") && f["size"].is_number_unsigned()) {
      saved.size = f["size"].get<std::uint64_t>();
    }
  }
  saved_content_ = **loaded;
  had_checkpoint_ = true;
}

bool PodLogSource::IncludeNamespace(std::string_view ns) const {
  const auto has = [ns](const std::vector<std::string>& list) {
    return std::find(list.begin(), list.end(), ns) != list.end();
  };
  if (has(options_.exclude_namespaces)) return false;
  return options_.include_namespaces.empty() || has(options_.include_namespaces);
}

void PodLogSource::Scan() {
  for (auto& [key, f] : files_) f->present = false;
  for (const DirEntry& pod_entry : ListDir(options_.root)) {
    if (!pod_entry.is_dir) continue;
    std::optional<PodDir> pod = ParsePodDirName(pod_entry.name);
    if (!pod || !IncludeNamespace(pod->namespace_name)) continue;
    const std::string pod_path = options_.root + "/" + pod_entry.name;
    for (const DirEntry& container : ListDir(pod_path)) {
      if (!container.is_dir) continue;
      const std::string dir = pod_path + "/" + container.name;
      for (const DirEntry& file : ListDir(dir)) {
        const PodLogFileKind kind = ClassifyPodLogFile(file.name);
        if (kind == PodLogFileKind::kIgnored) continue;
        Track(dir + "/" + file.name, *pod, container.name, kind);
      }
    }
  }
  if (!first_scan_done_) {
    std::vector<FileKey> missing;
    for (const auto& [key, saved] : saved_offsets_) {
      if (files_.count(key) == 0) missing.push_back(key);
    }
    missing.insert(missing.end(), recycled_.begin(), recycled_.end());
    recycled_.clear();
    for (const FileKey& key : missing) RecoverMissing(key);
  }
  // The checkpoint only places files that exist at start; later files with
  // a recycled inode must not inherit an old offset.
  saved_offsets_.clear();
  first_scan_done_ = true;

  order_.clear();
  for (auto& [key, f] : files_) order_.push_back(f.get());
  std::sort(order_.begin(), order_.end(),
            [](const TrackedFile* a, const TrackedFile* b) { return a->sort_key < b->sort_key; });
  tracked_.store(files_.size(), std::memory_order_relaxed);
}

void PodLogSource::Track(const std::string& path, const PodDir& pod, const std::string& container,
                         PodLogFileKind kind) {
  // Rotated names sort before the current file of the same directory, and
  // among themselves by their stamp: the order the runtime wrote them.
  const std::size_t slash = path.rfind('/');
  const std::string sort_key = path.substr(0, slash) +
                               (kind == PodLogFileKind::kRotated ? "/\x01" : "/\x02") +
                               path.substr(slash + 1);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  auto it = files_.find(FileKey{st.st_dev, st.st_ino});
  // A .gz was read (before kubelet compressed it) unless the checkpoint
  // says we were still reading it, or RecoverMissing() found it.
  const bool gz = kind == PodLogFileKind::kCompressed;
  if (gz && it == files_.end() && saved_offsets_.count(FileKey{st.st_dev, st.st_ino}) == 0) return;
  if (it == files_.end()) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      LogDebug(kComponent, "cannot open log file", {{"path", path}, {"error", strerror(errno)}});
      return;
    }
    // The descriptor is the truth: the name may have moved since stat().
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return;
    }
    const FileKey key{st.st_dev, st.st_ino};
    it = files_.find(key);
    if (it != files_.end()) {
      ::close(fd);
    } else {
      auto f = std::make_unique<TrackedFile>(options_.max_line_bytes);
      f->key = key;
      f->fd = fd;
      if (gz) {
        const int gz_fd = ::dup(fd);
        f->gz = gz_fd < 0 ? nullptr : gzdopen(gz_fd, "rb");
        if (f->gz == nullptr) {
          if (gz_fd >= 0) ::close(gz_fd);
          LogWarning(kComponent, "cannot read compressed log file", {{"path", path}});
          return;
        }
      }
      f->pod = pod;
      f->container = container;
      const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
      std::uint64_t start = 0;
      if (auto saved = saved_offsets_.find(key); saved != saved_offsets_.end()) {
        // Shorter than the saved offset, or different first bytes: not the
        // file we read (a recycled inode), or truncated; read it whole.
        const SavedFile& s = saved->second;
        if (gz ? GzHeadFingerprint(path, s.offset) == s.head
               : s.offset <= size && HeadFingerprint(fd, s.offset) == s.head) {
          start = s.offset;
        } else {
          LogInfo(kComponent, "checkpointed inode holds another file; reading it whole",
                  {{"path", path}});
          recycled_.push_back(key);  // the file it held is gone: RecoverMissing()
        }
      } else if (!first_scan_done_ && !had_checkpoint_ && kind == PodLogFileKind::kRotated) {
        start = size;  // history from before the first start
      }
      if (gz && start > 0 && gzseek(f->gz, static_cast<z_off_t>(start), SEEK_SET) < 0) {
        LogWarning(kComponent, "cannot seek in compressed log file; reading it whole",
                   {{"path", path}});
        gzrewind(f->gz);
        start = 0;
      }
      f->offset = f->start_offset = start;
      it = files_.emplace(key, std::move(f)).first;
    }
  }
  TrackedFile& f = *it->second;
  f.present = true;
  f.path = path;
  f.sort_key = sort_key;
}

void PodLogSource::RecoverMissing(const FileKey& key) {
  const SavedFile saved = saved_offsets_.at(key);
  const std::size_t slash = saved.path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : saved.path.substr(0, slash);
  const std::string name = saved.path.substr(slash + 1);
  const std::size_t dir_slash = dir.rfind('/');
  const std::string container = dir.substr(dir_slash + 1);
  const std::string pod_path = dir_slash == std::string::npos ? "" : dir.substr(0, dir_slash);
  std::optional<PodDir> pod = ParsePodDirName(pod_path.substr(pod_path.rfind('/') + 1));
  if (pod && !IncludeNamespace(pod->namespace_name)) return;  // not ours any more

  // Rotated (renamed "<n>.log.<stamp>") and then compressed while we were
  // down: its .gz has another inode and the same content. Which .gz is
  // told by the decompressed head; with nothing read (offset 0) there is
  // no head to tell it by.
  const std::string base = name.substr(0, name.find(".log") + 4);  // "0.log"
  if (pod && saved.offset > 0 && name.find(".log") != std::string::npos) {
    for (const DirEntry& e : ListDir(dir)) {
      if (ClassifyPodLogFile(e.name) != PodLogFileKind::kCompressed ||
          e.name.compare(0, base.size() + 1, base + ".") != 0) {
        continue;
      }
      const std::string gz_path = dir + "/" + e.name;
      struct stat st {};
      if (::stat(gz_path.c_str(), &st) != 0) continue;
      const FileKey gz_key{st.st_dev, st.st_ino};
      if (files_.count(gz_key) != 0 || GzHeadFingerprint(gz_path, saved.offset) != saved.head) {
        continue;
      }
      LogInfo(kComponent,
              "checkpointed log file was compressed while the agent was down; "
              "reading the rest from the .gz",
              {{"path", saved.path}, {"gz", gz_path}, {"offset", saved.offset}});
      saved_offsets_[gz_key] = saved;
      Track(gz_path, *pod, container, PodLogFileKind::kCompressed);
      if (files_.count(gz_key) != 0) return;
    }
  }
  if (saved.size && saved.offset >= *saved.size) {
    LogDebug(kComponent, "checkpointed log file is gone, read to its end", {{"path", saved.path}});
    return;
  }
  // Gone with data not yet delivered (a pod deleted, or a .gz kubelet has
  // pruned too): counted, one per file (how many lines is unknown).
  ++counters_.lost;
  LogWarning(kComponent,
             "checkpointed log file is gone before it was read to its end; counted as lost",
             {{"path", saved.path},
              {"offset", saved.offset},
              {"size", saved.size ? nlohmann::json(*saved.size) : nlohmann::json()}});
}

void PodLogSource::Emit(TrackedFile& f, const JoinedLine& line, std::uint64_t end_offset,
                        std::vector<LogRecord>& out) {
  // A pending P chunk of the other stream lies before this line's end:
  // resuming after this line would lose it, so the resume offset stays
  // before it (at worst this line is read again after a restart, never
  // lost). Several records can share that resume offset, and the event id
  // derives from the cursor, so the line's own end is added to tell them
  // apart: "<dev>:<ino>:<resume>:<end>". Re-read after a restart from
  // <resume>, the same chunk is pending again and the cursor is the same.
  std::uint64_t resume = end_offset;
  for (std::uint64_t p : f.pending_start) resume = std::min(resume, p);

  LogRecord r;
  r.source = "podlog";
  r.origin = Origin::kPod;
  r.text = EscapeInvalidUtf8(line.text);
  r.time = line.time;
  r.cursor =
      std::to_string(f.key.dev) + ":" + std::to_string(f.key.ino) + ":" + std::to_string(resume);
  if (resume != end_offset) r.cursor += ":" + std::to_string(end_offset);
  r.labels["namespace"] = f.pod.namespace_name;
  r.labels["pod"] = f.pod.pod;
  r.labels["uid"] = f.pod.uid;
  r.labels["container"] = f.container;
  r.labels["stream"] = std::string(CriStreamName(line.stream));
  if (line.truncated) {
    r.labels["truncated"] = "true";
    ++truncated_;
  }
  ++counters_.records;
  counters_.bytes += r.text.size();
  batch_bytes_ += r.text.size();
  out.push_back(std::move(r));
}

bool PodLogSource::BatchFull(const std::vector<LogRecord>& out, std::size_t limit) const {
  return out.size() >= limit || BatchBytesReached(batch_bytes_);
}

void PodLogSource::ParseLine(TrackedFile& f, std::string_view line, std::uint64_t line_start,
                             std::uint64_t line_end, std::vector<LogRecord>& out) {
  std::optional<CriLine> cri = ParseCriLine(line);
  if (!cri) {
    ++counters_.parse_errors;
    return;
  }
  const std::size_t s = StreamIndex(cri->stream);
  if (cri->partial && f.pending_start[s] == kNone) f.pending_start[s] = line_start;
  std::optional<JoinedLine> joined = f.joiner.Add(*cri);
  if (joined) {
    f.pending_start[s] = kNone;
    Emit(f, *joined, line_end, out);
  }
}

bool PodLogSource::ReadFile(TrackedFile& f, std::vector<LogRecord>& out, std::size_t limit) {
  for (;;) {
    std::size_t pos = 0;
    while (!BatchFull(out, limit)) {
      const std::size_t nl = f.buf.find('\n', pos);
      if (nl == std::string::npos) break;
      const std::uint64_t line_start = f.offset + pos;
      const std::uint64_t line_end = f.offset + nl + 1;
      const std::string_view line(f.buf.data() + pos, nl - pos);
      pos = nl + 1;
      if (f.skip_to_newline) {
        // The end of an overlong line: its head stands for it, cut.
        f.skip_to_newline = false;
        const std::string head = std::move(f.overlong);
        f.overlong.clear();
        ParseLine(f, head, f.overlong_start, line_end, out);
        continue;
      }
      ParseLine(f, line, line_start, line_end, out);
    }
    f.buf.erase(0, pos);
    f.offset += pos;
    if (BatchFull(out, limit)) return false;

    if (f.buf.size() > options_.max_line_bytes + kChunk) {
      // One line longer than the cap (no runtime writes such a CRI line:
      // containerd splits at 16 KiB, conmon at 8 KiB; a P...F line is cut
      // by the joiner): keep its head, which the joiner cuts at the cap and
      // labels truncated, and skip the rest up to its newline without
      // buffering it, so one huge line costs max_line_bytes, not its size.
      if (!f.skip_to_newline) {
        f.overlong_start = f.offset;
        f.overlong.assign(f.buf, 0, options_.max_line_bytes + kChunk);
        f.skip_to_newline = true;
      }
      f.offset += f.buf.size();
      f.buf.clear();
    }
    const std::size_t old = f.buf.size();
    f.buf.resize(old + kChunk);
    ssize_t n = 0;
    if (f.gz != nullptr) {
      // Sequential: the stream stands just after what buf holds. A .gz is
      // written whole (kubelet renames it from .tmp): no truncation check.
      n = gzread(f.gz, f.buf.data() + old, static_cast<unsigned>(kChunk));
      if (n <= 0) {
        f.buf.resize(old);
        if (n < 0 && !f.read_error_logged) {
          LogWarning(kComponent, "compressed log file is corrupt; the rest is lost",
                     {{"path", f.path}, {"offset", f.offset + old}});
          ++counters_.lost;
          f.read_error_logged = true;
        }
        return true;
      }
      f.buf.resize(old + static_cast<std::size_t>(n));
      continue;
    }
    do {
      n = ::pread(f.fd, f.buf.data() + old, kChunk, static_cast<off_t>(f.offset + old));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      f.buf.resize(old);
      if (n < 0) {
        // Retried at every read_interval: warn once per file, not each time.
        LogLevelFor(f.read_error_logged)(kComponent, "read failed",
                                         {{"path", f.path}, {"error", strerror(errno)}});
        f.read_error_logged = true;
        return true;
      }
      struct stat st {};
      if (::fstat(f.fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < f.offset + old) {
        // Truncated in place (conmon's log_size_max): what was there is gone.
        LogWarning(kComponent, "log file truncated; reading it from the start",
                   {{"path", f.path}, {"offset", f.offset + old}, {"size", st.st_size}});
        f.offset = 0;
        f.buf.clear();
        f.skip_to_newline = false;
        f.overlong.clear();
        f.joiner = PartialLineJoiner(options_.max_line_bytes);
        f.pending_start[0] = f.pending_start[1] = kNone;
        continue;
      }
      return true;
    }
    f.buf.resize(old + static_cast<std::size_t>(n));
  }
}

Status PodLogSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                          std::stop_token stop) {
  const std::size_t first = out.size();
  const std::size_t limit = first + max_records;
  batch_bytes_ = 0;
  for (;;) {
    if (stop.stop_requested()) return OkStatus();
    auto now = clock_.MonotonicNow();
    if (!first_scan_done_ || now >= next_scan_) {
      Scan();
      next_scan_ = now + options_.rescan_interval;
    }
    // Start where the last full batch stopped, so that one busy file cannot
    // starve the others; within a container the order stays oldest first.
    const std::size_t n = order_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t index = (next_index_ + i) % n;
      TrackedFile& f = *order_[index];
      const bool eof = ReadFile(f, out, limit);
      f.drained = eof && !f.present;
      if (BatchFull(out, limit)) {
        // Continue with the next container; stay on this file only when its
        // successor is a newer file of the same container (a rotated file is
        // drained before the current one).
        const std::size_t after = (index + 1) % n;
        const std::string& here = f.path;
        const std::string& there = order_[after]->path;
        const bool same_dir = here.substr(0, here.rfind('/')) == there.substr(0, there.rfind('/'));
        next_index_ = same_dir && after != 0 ? index : after;
        break;
      }
    }

    // Forget files that left the directory once read to their end. A P
    // chunk still pending there will never get its F: emit it as it is.
    bool forgot = false;
    for (auto it = files_.begin(); it != files_.end();) {
      TrackedFile& f = *it->second;
      const std::size_t pending = (f.joiner.has_pending(CriStream::kStdout) ? 1 : 0) +
                                  (f.joiner.has_pending(CriStream::kStderr) ? 1 : 0);
      if (!f.drained || out.size() + pending > limit) {
        ++it;
        continue;
      }
      for (CriStream s : {CriStream::kStdout, CriStream::kStderr}) {
        if (std::optional<JoinedLine> rest = f.joiner.Flush(s)) {
          f.pending_start[StreamIndex(s)] = kNone;
          Emit(f, *rest, f.offset, out);
        }
      }
      committed_.erase(it->first);
      it = files_.erase(it);
      forgot = true;
    }
    if (forgot) {
      order_.clear();
      for (auto& [key, f] : files_) order_.push_back(f.get());
      std::sort(order_.begin(), order_.end(), [](const TrackedFile* a, const TrackedFile* b) {
        return a->sort_key < b->sort_key;
      });
      tracked_.store(files_.size(), std::memory_order_relaxed);
    }

    if (out.size() > first) return OkStatus();
    now = clock_.MonotonicNow();
    auto wait =
        std::min<std::chrono::steady_clock::duration>(options_.read_interval, next_scan_ - now);
    auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(wait);
    if (wait_ms.count() < 0) wait_ms = std::chrono::milliseconds(0);
    Result<WaitOutcome> w = WaitReadable(-1, wakeup_, stop, wait_ms);
    if (!w.ok()) return w.error();
    if (*w == WaitOutcome::kStopped) return OkStatus();
  }
}

void PodLogSource::Commit(std::string_view cursor) {
  // "<dev>:<ino>:<resume>[:<end>]": the checkpoint keeps <resume>.
  std::uint64_t parts[4] = {0, 0, 0, 0};
  std::size_t n = 0;
  for (;;) {
    if (n == 4) return;
    const std::size_t colon = std::min(cursor.find(':'), cursor.size());
    const std::string_view field = cursor.substr(0, colon);
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), parts[n]);
    if (field.empty() || ec != std::errc() || end != field.data() + field.size()) return;
    ++n;
    if (colon == cursor.size()) break;
    cursor.remove_prefix(colon + 1);
  }
  if (n < 3) return;
  const FileKey key{static_cast<dev_t>(parts[0]), static_cast<ino_t>(parts[1])};
  if (files_.count(key) != 0) committed_[key] = parts[2];
}

Status PodLogSource::SaveCheckpoint() {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& [key, f] : files_) {
    auto c = committed_.find(key);
    const std::uint64_t offset = c != committed_.end() ? c->second : f->start_offset;
    struct stat st {};
    const std::uint64_t size =
        ::fstat(f->fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    files.push_back({{"dev", static_cast<std::uint64_t>(key.dev)},
                     {"ino", static_cast<std::uint64_t>(key.ino)},
                     {"offset", offset},
                     {"head", f->gz != nullptr ? GzHeadFingerprint(f->path, offset)
                                               : HeadFingerprint(f->fd, offset)},
                     {"path", EscapeInvalidUtf8(f->path)}});
    // A .gz's size on disk says nothing about its decompressed offsets.
    if (f->gz == nullptr) files.back()["size"] = size;
  }
  for (auto it = committed_.begin(); it != committed_.end();) {
    it = files_.count(it->first) != 0 ? std::next(it) : committed_.erase(it);
  }
  const std::string content = nlohmann::json{{"files", files}}.dump();
  if (content == saved_content_) return OkStatus();
  FL_RETURN_IF_ERROR(store_.Save(content));
  saved_content_ = content;
  return OkStatus();
}

SourceStats PodLogSource::stats() const { return counters_.Snapshot(); }

}  // namespace faultline
