// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/kmsg_source.h"

#include <charconv>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "collector/sources/boot_id.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "kmsg";

struct Checkpoint {
  std::string boot_id;
  std::uint64_t seq = 0;
};

// A checkpoint that is corrupt, foreign or unreadable only costs us the
// resume position: reading the whole ring again may repeat records, but
// loses none.
std::optional<Checkpoint> LoadCheckpoint(const CheckpointStore& store, SourceCounters& counters) {
  Result<std::optional<std::string>> loaded = store.Load();
  if (!loaded.ok()) {
    SourceCounters::Add(counters.parse_errors);
    LogWarning(kComponent, "ignoring unusable checkpoint",
               {{"path", store.path()}, {"error", loaded.error().ToString()}});
    return std::nullopt;
  }
  if (!loaded->has_value()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(**loaded, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("boot_id") && j["boot_id"].is_string() && j.contains("seq") &&
      j["seq"].is_number_unsigned()) {
    return Checkpoint{j["boot_id"].get<std::string>(), j["seq"].get<std::uint64_t>()};
  }
  SourceCounters::Add(counters.parse_errors);
  LogWarning(kComponent, "ignoring checkpoint that is not a kmsg checkpoint",
             {{"path", store.path()}});
  return std::nullopt;
}

std::string Cursor(const std::string& boot_id, std::uint64_t seq) {
  return boot_id + ":" + std::to_string(seq);
}

}  // namespace

KmsgSource::KmsgSource(const Options& options, std::unique_ptr<KmsgDevice> device,
                       std::string boot_id, const Clock& clock)
    : options_(options),
      device_(std::move(device)),
      boot_id_(std::move(boot_id)),
      clock_(clock),
      store_(options.state_dir, "kmsg") {}

Result<std::unique_ptr<KmsgSource>> KmsgSource::Open(const Options& options, const Clock& clock) {
  Result<std::unique_ptr<KmsgDevice>> device = OpenKmsgDevice(options.device_path);
  if (!device.ok()) return device.error();
  return OpenWithDevice(options, std::move(*device), clock);
}

Result<std::unique_ptr<KmsgSource>> KmsgSource::OpenWithDevice(const Options& options,
                                                               std::unique_ptr<KmsgDevice> device,
                                                               const Clock& clock) {
  Result<std::string> boot_id = ReadBootId(options.boot_id_path);
  if (!boot_id.ok()) return boot_id.error();
  std::unique_ptr<KmsgSource> source(
      new KmsgSource(options, std::move(device), std::move(*boot_id), clock));
  FL_RETURN_IF_ERROR(source->wakeup_.status());
  FL_RETURN_IF_ERROR(source->Position());
  return source;
}

Status KmsgSource::Position() {
  std::optional<Checkpoint> checkpoint = LoadCheckpoint(store_, counters_);
  if (checkpoint && checkpoint->boot_id == boot_id_) {
    resume_after_ = checkpoint->seq;
    committed_ = checkpoint->seq;
    saved_ = checkpoint->seq;
    LogInfo(kComponent, "resuming after the saved sequence",
            {{"device", options_.device_path}, {"seq", checkpoint->seq}});
    return device_->Rewind();
  }
  if (checkpoint) {
    LogInfo(kComponent, "new boot since the checkpoint: reading the whole ring",
            {{"device", options_.device_path}, {"saved_boot_id", checkpoint->boot_id}});
    return device_->Rewind();
  }
  if (options_.start_policy == StartPolicy::kEnd) return device_->SeekToEnd();
  return device_->Rewind();
}

Status KmsgSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                        std::stop_token stop) {
  std::size_t appended = 0;
  for (;;) {
    while (!pending_.empty() && appended < max_records) {
      out.push_back(std::move(pending_.front()));
      pending_.pop_front();
      ++appended;
    }
    if (appended >= max_records || stop.stop_requested()) return OkStatus();

    Result<KmsgDevice::ReadOutcome> r = device_->ReadRecord(raw_);
    if (!r.ok()) {
      // Hand over what we have; the error comes back on the next call.
      if (appended > 0) return OkStatus();
      return r.error();
    }
    switch (*r) {
      case KmsgDevice::ReadOutcome::kRecord:
        Handle(raw_);
        break;
      case KmsgDevice::ReadOutcome::kOverrun:
        // The kernel moved us to the oldest record; the next record's
        // sequence tells how many were overwritten.
        overrun_pending_ = true;
        break;
      case KmsgDevice::ReadOutcome::kAgain: {
        if (appended > 0) return OkStatus();
        Result<WaitOutcome> w = device_->Wait(wakeup_, stop, std::chrono::milliseconds(-1));
        if (!w.ok()) return w.error();
        if (*w == WaitOutcome::kStopped) return OkStatus();
        break;
      }
    }
  }
}

void KmsgSource::Handle(const std::string& raw) {
  Result<KmsgRecord> parsed = ParseKmsgRecord(raw);
  std::optional<std::uint64_t> seq =
      parsed.ok() ? std::optional<std::uint64_t>(parsed->sequence) : ParseKmsgSequence(raw);
  if (!seq) {
    NoteParseError(parsed.error());
    return;
  }

  // Records up to the checkpoint were handled before the restart: they only
  // move the sequence along. Gaps among them were reported back then.
  const bool already_handled = resume_after_ && *seq <= *resume_after_;
  if (!already_handled) {
    std::optional<std::uint64_t> base = last_seq_;
    if (resume_after_ && (!base || *base < *resume_after_)) base = resume_after_;
    std::uint64_t gap = (base && *seq > *base) ? *seq - *base - 1 : 0;
    if (gap > 0) {
      SourceCounters::Add(counters_.lost, gap);
      LogWarning(kComponent, "ring buffer overrun", {{"lost", gap}, {"next_seq", *seq}});
      LogRecord lost;
      lost.source = "kmsg";
      lost.origin = Origin::kKernel;
      lost.text = "faultline: kmsg ring buffer overrun: " + std::to_string(gap) + " records lost";
      lost.time = clock_.Now();
      lost.cursor = Cursor(boot_id_, *seq - 1);
      lost.labels = {{"sequence", std::to_string(*seq - 1)}, {"lost", std::to_string(gap)}};
      SourceCounters::Add(counters_.records);
      SourceCounters::Add(counters_.bytes, lost.text.size());
      pending_.push_back(std::move(lost));
    } else if (overrun_pending_ && !base) {
      // EPIPE before the first record: we never knew where the ring started.
      LogWarning(kComponent, "ring buffer overrun before the first record; loss not measurable");
    }
  }
  overrun_pending_ = false;
  last_seq_ = seq;
  if (!parsed.ok()) {
    NoteParseError(parsed.error());
    return;
  }
  if (already_handled) return;

  KmsgRecord& k = *parsed;
  LogRecord record;
  record.source = "kmsg";
  record.origin = Origin::kKernel;
  record.text = std::move(k.message);
  const auto since_boot_now = clock_.MonotonicNow().time_since_epoch();
  record.time = clock_.Now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                   since_boot_now - k.since_boot);
  record.cursor = Cursor(boot_id_, k.sequence);
  record.labels = {{"priority", std::to_string(k.priority)},
                   {"facility", std::to_string(k.facility)},
                   {"sequence", std::to_string(k.sequence)}};
  for (auto& [key, value] : k.dict) {
    if (key == "SUBSYSTEM") record.labels["subsystem"] = value;
    if (key == "DEVICE") record.labels["device"] = value;
  }
  SourceCounters::Add(counters_.records);
  SourceCounters::Add(counters_.bytes, record.text.size());
  pending_.push_back(std::move(record));
}

void KmsgSource::NoteParseError(const Status& error) {
  SourceCounters::Add(counters_.parse_errors);
  ++unlogged_parse_errors_;
  // At most one line a minute: the counter is what tests and alerts use.
  const auto now = clock_.MonotonicNow();
  if (last_parse_warning_ && now - *last_parse_warning_ < std::chrono::minutes(1)) return;
  LogWarning(kComponent, "skipping records that do not parse",
             {{"error", error.message()}, {"count", unlogged_parse_errors_}});
  unlogged_parse_errors_ = 0;
  last_parse_warning_ = now;
}

void KmsgSource::Commit(std::string_view cursor) {
  std::size_t colon = cursor.rfind(':');
  if (colon == std::string_view::npos || cursor.substr(0, colon) != boot_id_) return;
  std::string_view digits = cursor.substr(colon + 1);
  std::uint64_t seq = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return;
  if (!committed_ || seq > *committed_) committed_ = seq;
}

Status KmsgSource::SaveCheckpoint() {
  if (!committed_ || committed_ == saved_) return OkStatus();
  nlohmann::json j = {{"boot_id", boot_id_}, {"seq", *committed_}};
  // The boot id comes from a file; dump() would throw on invalid UTF-8.
  FL_RETURN_IF_ERROR(store_.Save(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  saved_ = committed_;
  return OkStatus();
}

}  // namespace faultline
