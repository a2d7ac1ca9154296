// SPDX-License-Identifier: Apache-2.0
// `faultline scan`: match log files offline with the rule packs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "base/json_text.h"
#include "base/time_format.h"
#include "matcher/cli_commands.h"
#include "matcher/count_newlines.h"
#include "matcher/file_buffer.h"
#include "matcher/input_line.h"
#include "matcher/line_blocks.h"
#include "matcher/rule_set.h"

namespace faultline {
namespace {

constexpr const char* kScanUsage = R"(usage: faultline scan [--rules PATH]... [--no-builtin]
                      [--source kernel|journal|pod|ibcounters|any] [--format json|text]
                      [--node NAME] [--fail-on event|taint] [--all] [FILE|-]...

Matches log lines against the rule packs and prints one event per match:
JSON objects, one per line (--format json, the default), or text for people.
Each JSON object is a faultline event as the agent publishes it (the schema:
schema/faultline-event-v1.schema.json, source "file") plus "file" and "line".

Input, detected per file from its first line (and per line in plain files):
plain lines, dmesg and dmesg -T output, journalctl -o short/short-iso/
short-precise and -o json output, CRI pod-log lines (P partials joined).
Without FILE, or with '-', reads stdin; stdin and pipes are read in blocks
of lines (about 64 MiB), so a long stream costs one block of memory.

  --rules PATH   a rule pack file or a directory of *.yaml packs; repeatable;
                 loaded after the built-in packs (which they may override)
  --no-builtin   do not load the packs compiled into faultline
  --source S     treat every line as written by S. Default: from the input
                 (dmesg: kernel; journal: kernel when the kernel wrote it,
                 else journal; CRI: pod; plain lines: any = every rule)
  --node NAME    the events' node (default: $NODE_NAME, else the hostname)
  --fail-on A    exit 1 if any event has action A or stronger (event < taint)
  --all          also print matches of rules whose action is ignore

Exit status: 0 even when faults are found (unless --fail-on); 2 for bad
usage, invalid rule packs, an unreadable input, or a file that shrank while
it was read (its events before the cut are printed).
)";

struct ScanOptions {
  RuleSources sources;
  std::optional<Origin> forced_origin;
  bool text = false;
  std::string node;  // --node, else $NODE_NAME, else the hostname (as the agent)
  std::chrono::system_clock::time_point detected_time = std::chrono::system_clock::now();
  std::optional<Action> fail_on;
  bool all = false;  // also matches of rules whose action is ignore
  std::vector<std::string> files;
};

// `value` in decimal, written into `buf`.
std::string_view ToDecimal(std::uint64_t value, std::span<char, 24> buf) {
  const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  return {buf.data(), static_cast<std::size_t>(result.ptr - buf.data())};
}

// Output is small (one event per fault line) but kept in one buffer and
// written in large pieces, never per input line.
class EventWriter {
 public:
  EventWriter(std::ostream& out, const ScanOptions& options) : out_(out), options_(options) {}
  ~EventWriter() { Flush(); }

  void Write(const std::string& file, std::uint64_t line_no, const InputLine& in, Origin origin,
             const RuleMatch& m) {
    ++events_;
    if (options_.fail_on && m.action >= *options_.fail_on) failed_ = true;
    if (options_.text) {
      // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on long
      // chains of std::string operator+.
      const std::string number = std::to_string(line_no);
      for (std::string_view part :
           {std::string_view(file), std::string_view(":"), std::string_view(number),
            std::string_view(": "), SeverityName(m.severity), std::string_view(" "),
            ActionName(m.action), std::string_view(" ["), std::string_view(m.rule->id),
            std::string_view("] "), std::string_view(m.summary), std::string_view("\n    "),
            std::string_view(in.text), std::string_view("\n")}) {
        buffer_.append(part);
      }
    } else {
      AppendEventJson(file, line_no, in, origin, m);
    }
    if (buffer_.size() > (1 << 16)) Flush();
  }

  // The published event (schema/faultline-event-v1.schema.json), as the
  // agent would send it for this line, read by a `file` source, plus where
  // the line is: `file` and `line` first, then the event's keys in the
  // schema's order.
  void AppendEventJson(const std::string& file, std::uint64_t line_no, const InputLine& in,
                       Origin origin, const RuleMatch& m) {
    // The event as views into the match, the line and these buffers
    // (ViewFaultEvent): no FaultEvent is filled, no string or map copied.
    char number[24];
    const std::string_view line = ToDecimal(line_no, number);
    if (file != json_of_ || file_json_.empty()) {  // the file's name as JSON, once per file
      json_of_ = file;
      file_json_.assign("{\"file\":");
      AppendJsonString(file_json_, file);
      file_json_.append(",\"line\":");
      cursor_.assign(file).append(":");
    }
    // "FILE:" kept from the event before: only the line number changes.
    cursor_.resize(file.size() + 1);
    cursor_.append(line);
    const std::array<StringViewPair, 2> labels = {StringViewPair("file", file),
                                                  StringViewPair("line", line)};
    RecordView record;
    record.source = "file";
    record.origin = origin;
    record.text = in.text;
    record.cursor = cursor_;
    record.cursor_shared = file.size() + 1;  // "FILE:"
    record.time = in.time.value_or(options_.detected_time);
    record.labels = labels;
    const FaultEventView event = ViewFaultEvent(m, record, options_.node, /*boot_id=*/"",
                                                options_.detected_time, view_buffers_);
    // Written directly, in the schema's order (base/json_text.h: the bytes an
    // nlohmann::json of the event would dump, without building one: that was
    // ~100,000 instructions per event, most of the output's cost).
    buffer_ += file_json_;
    buffer_ += line;  // line_no in decimal, as AppendJsonNumber writes it
    AppendFaultEventMembers(buffer_, event, memo_, /*first=*/false);
    buffer_ += "}\n";
  }

  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  std::uint64_t events() const { return events_; }
  bool failed() const { return failed_; }

 private:
  std::ostream& out_;
  const ScanOptions& options_;
  std::string buffer_;
  std::string cursor_;
  std::string json_of_;  // the file whose name file_json_ holds, as an event's start
  std::string file_json_;
  EventViewBuffers view_buffers_;
  EventTextMemo memo_;  // the members this event shares with earlier ones, as JSON
  std::uint64_t events_ = 0;
  bool failed_ = false;
};

void WriteMatches(const ScanOptions& options, const std::string& file, std::uint64_t line_no,
                  const InputLine& in, Origin origin, const std::vector<RuleMatch>& matches,
                  EventWriter& writer) {
  for (const RuleMatch& m : matches) {
    if (m.action == Action::kIgnore && !options.all) continue;
    writer.Write(file, line_no, in, origin, m);
  }
}

void MatchAndWrite(const RuleSet& set, const ScanOptions& options, const std::string& file,
                   std::uint64_t line_no, const InputLine& in, EventWriter& writer,
                   std::vector<RuleMatch>& matches) {
  const Origin origin = options.forced_origin.value_or(in.origin);
  matches.clear();
  set.MatchRecordText(in.text, origin, matches);  // a CRI or journal record, through the prefilter
  WriteMatches(options, file, line_no, in, origin, matches, writer);
}

// The agent's default node name: $NODE_NAME, else the hostname.
std::string DefaultNodeName() {
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;  // NOLINT
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return host;
  return "localhost";
}

// Line-oriented formats whose message is a substring of the raw line
// (plain, dmesg, journal short; CRI without partials): the prefilter runs over the raw buffer and
// only candidate lines are parsed, and only their candidate rules run.
// `lines_before` is how many lines of the file came before `text`.
void ScanRaw(const RuleSet& set, const ScanOptions& options, const std::string& file,
             std::string_view text, std::uint64_t lines_before, EventWriter& writer) {
  std::vector<RuleMatch> matches;
  InputLine in;  // refilled line after line: its buffers reused
  set.ForEachCandidate(
      text, options.forced_origin.value_or(Origin::kAny),
      [&](std::string_view line, std::uint64_t line_no, std::span<const std::uint32_t> candidates) {
        ParseInputLine(line, in);
        const Origin origin = options.forced_origin.value_or(in.origin);
        matches.clear();
        set.MatchCandidates(in.text, origin, candidates, matches);
        WriteMatches(options, file, lines_before + line_no, in, origin, matches, writer);
      });
}

// Formats that need decoding (JSON escapes) or joining (CRI partials):
// every line is parsed into its record first. A CRI stream's partial line
// may be continued in the next block of a stream read in blocks.
class RecordScan {
 public:
  RecordScan(const RuleSet& set, const ScanOptions& options, const std::string& file,
             EventWriter& writer)
      : set_(set), options_(options), file_(file), writer_(writer) {}

  // Whole lines of the file, after `lines_before` others.
  void Block(std::string_view text, std::uint64_t lines_before) {
    std::uint64_t line_no = lines_before;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t nl = text.find('\n', start);
      std::string_view raw =
          text.substr(start, nl == std::string_view::npos ? text.npos : nl - start);
      start = nl == std::string_view::npos ? text.size() : nl + 1;
      ++line_no;
      InputLine in = ParseInputLine(raw);
      if (in.format == LineFormat::kCri) {
        auto it = partial_.find(in.stream);
        if (it != partial_.end()) {
          it->second.line.text += in.text;
          it->second.line.partial = in.partial;
          if (in.partial) continue;
          Pending done = std::move(it->second);
          partial_.erase(it);
          Write(done.line_no, done.line);
          continue;
        }
        if (in.partial) {
          std::string stream = in.stream;
          partial_[stream] = Pending{std::move(in), line_no};
          continue;
        }
      }
      Write(line_no, in);
    }
  }

  // Whether a CRI partial line waits for its end.
  bool open() const { return !partial_.empty(); }

  // The file's end: a partial line left open is matched as it is.
  void Finish() {
    for (auto& [stream, pending] : partial_) Write(pending.line_no, pending.line);
    partial_.clear();
  }

 private:
  struct Pending {
    InputLine line;
    std::uint64_t line_no = 0;
  };
  void Write(std::uint64_t line_no, const InputLine& in) {
    MatchAndWrite(set_, options_, file_, line_no, in, writer_, matches_);
  }

  const RuleSet& set_;
  const ScanOptions& options_;
  const std::string& file_;
  EventWriter& writer_;
  std::map<std::string, Pending> partial_;  // per CRI stream
  std::vector<RuleMatch> matches_;
};

// How a file is read: raw (ScanRaw), or record by record (RecordScan):
// journalctl -o json or CRI output throughout (its first lines all are)
// need every line decoded or joined. Mixed files take the raw path, where
// each candidate line is parsed on its own.
enum class FileLayout { kRaw, kJournalJson, kCri };

FileLayout DetectLayout(std::string_view text) {
  int json = 0, cri = 0, seen = 0;
  std::size_t start = 0;
  while (start < text.size() && seen < 32) {
    std::size_t nl = text.find('\n', start);
    std::string_view line =
        text.substr(start, nl == std::string_view::npos ? text.npos : nl - start);
    if (!line.empty() && line != "\r") {
      ++seen;
      LineFormat f = ParseInputLine(line).format;
      json += f == LineFormat::kJournalJson;
      cri += f == LineFormat::kCri;
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  if (seen > 0 && json == seen) return FileLayout::kJournalJson;
  if (seen > 0 && cri == seen) return FileLayout::kCri;
  return FileLayout::kRaw;
}

// Whether a CRI file may hold a partial line ("TIME stdout P ..."): one
// whose message goes on in a later line. A file without one is a line per
// record, each message a suffix of its line, and takes the raw path: the
// prefilter over the whole buffer, only candidate lines parsed (64 MiB of
// CRI lines, 0.15 s record by record, where parsing every line's time and
// copying its message was most of it). Text that only looks like a tag
// sends the file the record way, never the other.
bool MayHoldCriPartials(std::string_view text) {
  for (std::string_view tag : {"stdout P", "stderr P"}) {
    if (memmem(text.data(), text.size(), tag.data(), tag.size()) != nullptr) return true;
  }
  return false;
}

// One file's scan, given its text whole or in blocks of whole lines (a
// stream): the first block decides how the file is read; a CRI block
// without partial lines, and none left open, is read raw.
class FileScan {
 public:
  FileScan(const RuleSet& set, const ScanOptions& options, std::string name, EventWriter& writer)
      : set_(set),
        options_(options),
        name_(std::move(name)),
        writer_(writer),
        records_(set, options, name_, writer) {}

  void Block(std::string_view text, bool last) {
    if (!layout_) layout_ = DetectLayout(text);
    if (*layout_ == FileLayout::kJournalJson ||
        (*layout_ == FileLayout::kCri && (records_.open() || MayHoldCriPartials(text)))) {
      records_.Block(text, lines_);
    } else {
      ScanRaw(set_, options_, name_, text, lines_, writer_);
    }
    // The next block's first line number (a whole file has no next block).
    if (!last) lines_ += CountNewlines(text.data(), text.data() + text.size());
  }
  void Finish() { records_.Finish(); }
  const std::string& name() const { return name_; }

 private:
  const RuleSet& set_;
  const ScanOptions& options_;
  const std::string name_;
  EventWriter& writer_;
  RecordScan records_;
  std::optional<FileLayout> layout_;
  std::uint64_t lines_ = 0;  // lines of the blocks before
};

}  // namespace

int RunScanCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ScanOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= args.size()) return false;
      into = args[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      out << kScanUsage;
      return 0;
    } else if (a == "--rules") {
      if (!value(v)) return err << "faultline scan: --rules needs a PATH\n", 2;
      options.sources.paths.push_back(v);
    } else if (a == "--no-builtin") {
      options.sources.builtin = false;
    } else if (a == "--all") {
      options.all = true;
    } else if (a == "--source") {
      if (!value(v) || !ParseOrigin(v)) {
        return err << "faultline scan: --source needs kernel, journal, pod, ibcounters or any\n", 2;
      }
      options.forced_origin = ParseOrigin(v);
    } else if (a == "--format") {
      if (!value(v) || (v != "json" && v != "text")) {
        return err << "faultline scan: --format needs json or text\n", 2;
      }
      options.text = v == "text";
    } else if (a == "--node") {
      if (!value(options.node)) return err << "faultline scan: --node needs a NAME\n", 2;
    } else if (a == "--fail-on") {
      if (!value(v) || !ParseAction(v) || *ParseAction(v) == Action::kIgnore) {
        return err << "faultline scan: --fail-on needs event or taint\n", 2;
      }
      options.fail_on = ParseAction(v);
    } else if (a.size() > 1 && a[0] == '-') {
      err << "faultline scan: unknown option '" << a << "'\n" << kScanUsage;
      return 2;
    } else {
      options.files.push_back(a);
    }
  }
  if (options.files.empty()) options.files.push_back("-");
  if (options.node.empty()) options.node = DefaultNodeName();

  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> set = LoadRules(options.sources, {}, diags, texts);
  if (!set) {
    // Warnings (W201, W202) are for `rules check`; show only what broke.
    Diagnostics errors;
    for (const Diagnostic& d : diags.all()) {
      if (d.level == Diagnostic::Level::kError) errors.Error(d.code, d.where, d.message);
    }
    errors.Print(err, texts);
    err << "faultline scan: invalid rule packs; run `faultline rules check` for details\n";
    return 2;
  }
  int status = 0;
  EventWriter writer(out, options);
  for (const std::string& file : options.files) {
    FileScan scan(*set, options, file == "-" ? "<stdin>" : file, writer);
    // A regular file is mapped whole; stdin and other streams are read in
    // blocks of lines (the memory of a block, not of the stream).
    struct stat st {};
    if (file != "-" && (stat(file.c_str(), &st) != 0 || S_ISREG(st.st_mode))) {
      Result<FileBuffer> buffer = FileBuffer::Open(file);
      if (!buffer.ok()) {
        err << "faultline scan: cannot read " << buffer.error().message() << "\n";
        status = 2;
        continue;
      }
      scan.Block(buffer->text(), /*last=*/true);
      scan.Finish();
      if (std::optional<std::size_t> at = buffer->shrunk_to()) {
        // The events found before the cut are printed; say what was not read.
        err << "faultline scan: " << scan.name()
            << ": the file was truncated while it was read (as by logrotate's copytruncate); "
               "from byte "
            << *at << " on it was not scanned\n";
        status = 2;
      }
      continue;
    }
    const int fd = file == "-" ? STDIN_FILENO : open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      err << "faultline scan: cannot read " << file << ": " << std::strerror(errno) << "\n";
      status = 2;
      continue;
    }
    LineBlockReader blocks(fd);
    for (;;) {
      Result<std::optional<std::string_view>> block = blocks.Next();
      if (!block.ok()) {
        err << "faultline scan: cannot read " << scan.name() << ": " << block.error().message()
            << "\n";
        status = 2;
        break;
      }
      if (!*block) break;
      scan.Block(**block, /*last=*/false);
    }
    scan.Finish();
    if (fd != STDIN_FILENO) close(fd);
  }
  writer.Flush();
  out.flush();
  if (status == 0 && writer.failed()) status = 1;
  return status;
}

}  // namespace faultline
