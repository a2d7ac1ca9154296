// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/pipeline.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string_view>
#include <utility>

#include "base/log.h"
#include "collector/agent/pipeline_testing.h"

namespace faultline {
namespace {

// Time: every reading goes through the injected Clock's monotonic time (the
// event timestamps through its wall time): the heartbeat, suppression
// windows, latencies, the checkpoint cadence and the shutdown deadline. The
// waits themselves (Poll, Flush, a blocked Read, the readers' condition
// variable) stay real and short, so a test that moves a FakeClock decides
// when a save is due or when Stop() gives up.
using SteadyTime = std::chrono::steady_clock::time_point;

std::int64_t ToNs(SteadyTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// What a batch's records hold, roughly, for the queue's byte bound.
std::size_t BatchBytes(const std::vector<LogRecord>& records) {
  std::size_t bytes = 0;
  for (const LogRecord& r : records) {
    bytes += sizeof(LogRecord) + r.text.size() + r.cursor.size();
    for (const auto& [key, value] : r.labels) bytes += 64 + key.size() + value.size();
  }
  return bytes;
}

// Cursors in read order, packed into one buffer: a record waiting for its
// commit costs its cursor's bytes plus four, not a std::string (and an
// allocation) each. That is most of the agent's memory during a flood,
// whose folded records wait for their follow-up's delivery.
class CursorQueue {
 public:
  bool empty() const { return head_ == lengths_.size(); }
  std::size_t size() const { return lengths_.size() - head_; }

  void Push(std::string_view cursor) {
    bytes_.append(cursor);
    lengths_.push_back(static_cast<std::uint32_t>(cursor.size()));
  }
  std::string_view Front() const { return {bytes_.data() + head_bytes_, lengths_[head_]}; }
  void PopFront() {
    head_bytes_ += lengths_[head_];
    ++head_;
    if (empty()) {
      Clear();
    } else if (head_ >= kCompactAfter && head_ * 2 >= lengths_.size()) {
      // Reclaim the popped front; amortized O(1) per record.
      bytes_.erase(0, head_bytes_);
      lengths_.erase(lengths_.begin(), lengths_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
      head_bytes_ = 0;
    }
  }
  // Keeps a small capacity for the steady state; gives back a large one.
  // After a suppression window's hold, hundreds of thousands of cursors
  // pass through the book and the reader's two queues at once, and each
  // would otherwise keep that capacity for the rest of the run.
  void Clear() {
    if (bytes_.capacity() > kKeepBytes) {
      std::string().swap(bytes_);
      std::vector<std::uint32_t>().swap(lengths_);
    } else {
      bytes_.clear();
      lengths_.clear();
    }
    head_ = 0;
    head_bytes_ = 0;
  }
  void swap(CursorQueue& other) noexcept {
    bytes_.swap(other.bytes_);
    lengths_.swap(other.lengths_);
    std::swap(head_, other.head_);
    std::swap(head_bytes_, other.head_bytes_);
  }

 private:
  static constexpr std::size_t kCompactAfter = 4096;
  static constexpr std::size_t kKeepBytes = std::size_t{256} * 1024;
  std::string bytes_;
  std::vector<std::uint32_t> lengths_;  // a cursor longer than 4 GiB is not one
  std::size_t head_ = 0;                // index of the front in lengths_
  std::size_t head_bytes_ = 0;          // its offset in bytes_
};

}  // namespace

struct Pipeline::Reader {
  std::unique_ptr<Source> source;
  std::size_t index = 0;
  std::string name;
  Counter* lines = nullptr;
  Counter* bytes = nullptr;
  Counter* parse_errors = nullptr;
  Counter* lost = nullptr;
  Counter* read_errors = nullptr;
  Counter* save_failures = nullptr;

  // Reader thread only.
  SourceStats last_stats;
  CursorQueue committing;  // swapped with to_commit: both keep their capacity
  bool dirty = false;      // committed in memory, not yet saved
  SteadyTime last_save{};
  // Failed saves since the last good one: each new streak (a disk filled,
  // then remounted read-only) is logged at its first failure, not only when
  // the all-time counter passes a power of ten.
  std::uint64_t save_failure_streak = 0;

  // Shared with the match thread.
  std::mutex mu;
  std::condition_variable_any cv;
  CursorQueue to_commit;                         // guarded by mu
  std::optional<std::stop_source> current_read;  // guarded by mu
  std::atomic<bool> needs_save{false};
  std::atomic<std::size_t> uncommitted{0};
  std::atomic<bool> exhausted{false};
  std::atomic<bool> failed{false};
  std::atomic<std::uint64_t> pushed{0};   // records handed to the queue (reader)
  std::atomic<std::uint64_t> settled{0};  // records the match thread has processed

  std::jthread thread;
};

struct Pipeline::Book {
  explicit Book(std::size_t evidence_lines) : evidence(evidence_lines) {}

  // Records read and not yet committable, in read order: sequence numbers
  // first_seq, first_seq + 1, ... A record is committable once it and every
  // earlier one has no hold.
  CursorQueue cursors;
  std::uint64_t first_seq = 0;
  std::uint64_t next_seq = 0;
  // Sequence number -> events from that record not yet settled. Few: one
  // per event in flight and one per suppression window and source, however
  // many records are folded.
  std::map<std::uint64_t, std::uint32_t> holds;
  // A delivery failed: the checkpoint stays before that record for the rest
  // of the run, so later records need no bookkeeping.
  bool frozen = false;
  SteadyTime last_wake{};
  // The oldest hold FlushHeldFolds() last looked at. If it still holds, it
  // is an event in flight (or a follow-up already sent early): another
  // look would find nothing to send.
  std::uint64_t flush_probed = UINT64_MAX;
  // The source's last lines, for the evidence of a tainting event.
  EvidenceRing evidence;

  void Push(std::uint64_t seq, std::string_view cursor) {
    if (cursors.empty()) first_seq = seq;
    cursors.Push(cursor);
  }
  bool Has(std::uint64_t seq) const {
    return !cursors.empty() && seq >= first_seq && seq - first_seq < cursors.size();
  }
};

Pipeline::Pipeline(std::vector<std::unique_ptr<Source>> sources, const RuleSetHolder& rules,
                   EventSink& sink, const Clock& clock, AgentMetrics& metrics, Options options)
    : rules_(rules),
      sink_(sink),
      clock_(clock),
      metrics_(metrics),
      options_(std::move(options)),
      queue_(options_.max_queued_batches, options_.max_queued_bytes),
      suppressor_(options_.suppression) {
  for (std::size_t i = 0; i < sources.size(); ++i) {
    auto reader = std::make_unique<Reader>();
    reader->name = std::string(sources[i]->name());
    reader->index = i;
    reader->source = std::move(sources[i]);
    reader->source->set_max_batch_bytes(options_.max_batch_bytes);
    reader->lines = &metrics_.SourceLines(reader->name);
    reader->bytes = &metrics_.SourceBytes(reader->name);
    reader->parse_errors = &metrics_.SourceParseErrors(reader->name);
    reader->lost = &metrics_.SourceLost(reader->name);
    reader->read_errors = &metrics_.SourceReadErrors(reader->name);
    reader->save_failures = &metrics_.CheckpointSaveFailures(reader->name);
    readers_.push_back(std::move(reader));
    books_.push_back(std::make_unique<Book>(options_.evidence_lines));
  }
}

Pipeline::~Pipeline() { Stop(clock_.MonotonicNow()); }

void Pipeline::Start() {
  if (started_) return;
  started_ = true;
  heartbeat_ns_ = ToNs(clock_.MonotonicNow());
  matcher_ = std::jthread([this](std::stop_token stop) { MatchLoop(stop); });
  for (auto& reader : readers_) {
    Reader* r = reader.get();
    r->thread = std::jthread([this, r](std::stop_token stop) { ReadLoop(*r, stop); });
  }
}

// ---- reader threads ----

void Pipeline::ApplyCommits(Reader& reader) {
  CursorQueue& cursors = reader.committing;
  {
    std::lock_guard lock(reader.mu);
    cursors.swap(reader.to_commit);
  }
  if (!cursors.empty()) reader.dirty = true;
  for (; !cursors.empty(); cursors.PopFront()) reader.source->Commit(cursors.Front());
  const SteadyTime now = clock_.MonotonicNow();
  if (reader.dirty && now - reader.last_save >= options_.checkpoint_interval) {
    reader.last_save = now;
    if (Status s = reader.source->SaveCheckpoint(); !s.ok()) {
      reader.save_failures->Inc();
      if (LogThisOccurrence(++reader.save_failure_streak)) {
        LogWarning("pipeline", "checkpoint not saved; will retry",
                   {{"source", reader.name},
                    {"error", s.ToString()},
                    {"failures", reader.save_failure_streak}});
      }
    } else {
      reader.dirty = false;
      if (reader.save_failure_streak > 0) {
        LogInfo("pipeline", "checkpoint saved again",
                {{"source", reader.name}, {"failures", reader.save_failure_streak}});
        reader.save_failure_streak = 0;
      }
    }
  }
  reader.needs_save.store(reader.dirty, std::memory_order_relaxed);
}

void Pipeline::ReadLoop(Reader& reader, std::stop_token stop) {
  Source& source = *reader.source;
  std::vector<LogRecord> records = TakeSpareRecords();
  while (!stop.stop_requested()) {
    ApplyCommits(reader);
    if (reader.exhausted || reader.failed) {
      // Nothing more to read, but commits still arrive from the match thread.
      std::unique_lock lock(reader.mu);
      reader.cv.wait_for(lock, stop, options_.checkpoint_interval,
                         [&] { return !reader.to_commit.empty(); });
      continue;
    }
    if (reader.uncommitted.load(std::memory_order_relaxed) >= options_.max_uncommitted_records) {
      // Too much read and not yet delivered: wait for deliveries to catch up.
      std::unique_lock lock(reader.mu);
      reader.cv.wait_for(lock, stop, options_.poll_interval, [&] {
        return reader.uncommitted.load(std::memory_order_relaxed) <
               options_.max_uncommitted_records;
      });
      continue;
    }

    // A stop source of its own for this one Read, so that the match thread can
    // wake a blocked Read when a checkpoint is due, without stopping the source.
    std::stop_source read_stop;
    {
      std::lock_guard lock(reader.mu);
      reader.current_read = read_stop;
    }
    Status status;
    {
      std::stop_callback forward(stop, [&read_stop] { read_stop.request_stop(); });
      records.clear();
      status = source.Read(records, options_.max_batch_records, read_stop.get_token());
    }
    {
      std::lock_guard lock(reader.mu);
      reader.current_read.reset();
    }

    const SourceStats stats = source.stats();
    reader.lines->Inc(stats.records - std::min(stats.records, reader.last_stats.records));
    reader.bytes->Inc(stats.bytes - std::min(stats.bytes, reader.last_stats.bytes));
    reader.parse_errors->Inc(stats.parse_errors -
                             std::min(stats.parse_errors, reader.last_stats.parse_errors));
    reader.lost->Inc(stats.lost - std::min(stats.lost, reader.last_stats.lost));
    reader.last_stats = stats;

    if (!records.empty()) {
      reader.pushed.fetch_add(records.size());
      // Waits while the queue is full (backpressure). During shutdown the
      // match thread keeps draining, so this returns.
      const std::size_t bytes = BatchBytes(records);
      queue_.Push(Batch{reader.index, std::move(records)}, bytes);
      records = TakeSpareRecords();
    }
    if (status.ok()) continue;
    switch (status.code()) {
      case StatusCode::kOutOfRange:
        LogInfo("pipeline", "source exhausted", {{"source", reader.name}});
        reader.exhausted = true;
        break;
      case StatusCode::kUnavailable: {
        reader.read_errors->Inc();
        if (LogThisOccurrence(reader.read_errors->value())) {
          LogWarning("pipeline", "source read failed; retrying",
                     {{"source", reader.name},
                      {"error", status.ToString()},
                      {"failures", reader.read_errors->value()}});
        }
        std::unique_lock lock(reader.mu);
        reader.cv.wait_for(lock, stop, options_.read_error_backoff, [] { return false; });
        break;
      }
      default:
        reader.read_errors->Inc();
        LogError("pipeline", "source failed; the agent goes on without it",
                 {{"source", reader.name}, {"error", status.ToString()}});
        reader.failed = true;
        break;
    }
  }
}

std::vector<LogRecord> Pipeline::TakeSpareRecords() {
  {
    std::lock_guard lock(spare_mu_);
    if (!spare_records_.empty()) {
      std::vector<LogRecord> records = std::move(spare_records_.back());
      spare_records_.pop_back();
      return records;
    }
  }
  std::vector<LogRecord> records;
  records.reserve(options_.max_batch_records);
  return records;
}

void Pipeline::GiveBackRecords(std::vector<LogRecord> records) {
  constexpr std::size_t kMaxSpare = 8;  // enough for the readers; the rest is freed
  records.clear();
  std::lock_guard lock(spare_mu_);
  if (spare_records_.size() < kMaxSpare) spare_records_.push_back(std::move(records));
}

// ---- match thread ----

void Pipeline::MatchLoop(std::stop_token /*stop: the loop ends when the queue closes*/) {
  std::vector<Suppressor::FollowUp> follow_ups;
  for (;;) {
    heartbeat_ns_.store(ToNs(clock_.MonotonicNow()), std::memory_order_relaxed);
    std::optional<Batch> batch = queue_.Pop(options_.poll_interval);
    if (batch) {
      Process(*batch);
      GiveBackRecords(std::move(batch->records));
    }
    sink_.Poll(std::chrono::milliseconds(0));
    follow_ups.clear();
    suppressor_.TakeDue(clock_.MonotonicNow(), follow_ups);
    PublishFollowUps(follow_ups);
    AdvanceCommits();
    metrics_.queue_depth.Set(static_cast<double>(queue_.size()));
    if (!batch && queue_.closed_and_empty()) break;
  }
  match_done_ = true;
}

void Pipeline::Process(Batch& batch) {
  const std::shared_ptr<const RuleSet> rules = rules_.Get();  // one snapshot per batch
  Book& book = *books_[batch.source];
  const SteadyTime now = clock_.MonotonicNow();
  const auto detected = clock_.Now();
  batch_matches_.clear();
  // Events are built only here: for first occurrences, and by the suppressor
  // for the last repeat it folded (valid until the batch ends: Settle below).
  const Suppressor::EventBuilder build = [&](std::uint64_t token) {
    const BatchMatch& m = batch_matches_[token];
    FaultEvent event = MakeFaultEvent(m.match, batch.records[m.record], options_.node_name,
                                      options_.boot_id, detected);
    if (event.action == Action::kTaint) {
      event.evidence = book.evidence.Before(batch.records, m.record);
    }
    return event;
  };
  for (std::size_t i = 0; i < batch.records.size(); ++i) {
    const LogRecord& record = batch.records[i];
    const std::uint64_t seq = book.next_seq++;
    if (!book.frozen) book.Push(seq, record.cursor);
    if (!rules) continue;
    matches_.clear();
    rules->Match(record, matches_);
    for (RuleMatch& match : matches_) {
      auto [it, inserted] = match_counters_.try_emplace(match.rule->id, nullptr);
      if (inserted) it->second = &metrics_.Matches(match.rule->id);
      it->second->Inc();
      if (match.action == Action::kIgnore) {
        metrics_.events_ignored.Inc();
        continue;
      }
      const std::uint64_t token = batch_matches_.size();
      batch_matches_.push_back({i, std::move(match)});
      const Suppressor::Hold hold{batch.source, seq};
      follow_ups_.clear();
      switch (suppressor_.AdmitMatch(batch_matches_.back().match, hold, now, build, token,
                                     follow_ups_)) {
        case Suppressor::Verdict::kPublish:
          Hold(hold);
          PublishWithRetry(build(token), {hold});
          break;
        case Suppressor::Verdict::kFoldedAndHeld:
          Hold(hold);
          metrics_.events_suppressed.Inc();
          break;
        case Suppressor::Verdict::kFolded:
          metrics_.events_suppressed.Inc();
          break;
      }
      PublishFollowUps(follow_ups_);
    }
  }
  suppressor_.Settle(build);
  book.evidence.Keep(batch.records);
  FlushHeldFolds(batch.source);
  // Logged at the 1st, 10th, 100th, ... bypass: not once per batch.
  if (const std::uint64_t bypassed = suppressor_.bypassed(); bypassed >= next_bypass_log_) {
    next_bypass_log_ = bypassed * 10;
    LogWarning("pipeline", "suppression memory bound reached; new keys are published unfolded",
               {{"bypassed", bypassed}, {"bytes", suppressor_.bytes()}});
  }
}

void Pipeline::PublishFollowUps(std::vector<Suppressor::FollowUp>& follow_ups) {
  for (Suppressor::FollowUp& follow_up : follow_ups) {
    PublishWithRetry(follow_up.event, follow_up.holds);
  }
}

void Pipeline::FlushHeldFolds(std::size_t source) {
  Book& book = *books_[source];
  if (book.frozen || book.holds.empty()) return;
  const std::uint64_t oldest = book.holds.begin()->first;
  const std::uint64_t bound = options_.suppression_flush_records;
  if (book.next_seq - oldest < bound || oldest == book.flush_probed) return;
  book.flush_probed = oldest;
  // Every window with bound records or more behind its hold, not only the
  // oldest: a cheaper probe would let the next one stall the commits next.
  follow_ups_.clear();
  suppressor_.FlushHeld(source, book.next_seq - bound, follow_ups_);
  PublishFollowUps(follow_ups_);
}

bool Pipeline::PublishWithRetry(const FaultEvent& event,
                                const std::vector<Suppressor::Hold>& holds) {
  const SteadyTime published_at = clock_.MonotonicNow();
  for (;;) {
    Status status =
        sink_.Publish(event, [this, holds, published_at, rule = event.rule](const Status& result) {
          OnDelivered(holds, result, published_at, rule);
        });
    if (status.ok()) {
      ++in_flight_;
      metrics_.events_produced.Inc();
      return true;
    }
    if (status.code() == StatusCode::kResourceExhausted) {
      // The producer's queue is full (a broker outage): run callbacks and
      // retry. Meanwhile the sources wait on the full batch queue.
      if (ToNs(clock_.MonotonicNow()) >= publish_deadline_ns_.load(std::memory_order_relaxed)) {
        break;
      }
      heartbeat_ns_.store(ToNs(clock_.MonotonicNow()), std::memory_order_relaxed);
      sink_.Poll(options_.poll_interval);
      AdvanceCommits();
      continue;
    }
    if (status.code() == StatusCode::kInvalidArgument) {
      metrics_.events_rejected.Inc();
      LogWarning("pipeline", "event refused for good; counted and skipped",
                 {{"rule", event.rule}, {"id", event.id}, {"error", status.ToString()}});
      for (const auto& hold : holds) Release(hold);
      return false;
    }
    LogError("pipeline", "event could not be published",
             {{"rule", event.rule}, {"id", event.id}, {"error", status.ToString()}});
    break;
  }
  ++undelivered_;
  metrics_.events_undelivered.Inc();
  for (const auto& hold : holds) Freeze(hold);
  return false;
}

void Pipeline::OnDelivered(const std::vector<Suppressor::Hold>& holds, const Status& result,
                           SteadyTime published_at, const std::string& rule) {
  --in_flight_;
  if (result.ok()) {
    metrics_.events_delivered.Inc();
    metrics_.delivery_latency.Observe(
        std::chrono::duration<double>(clock_.MonotonicNow() - published_at).count());
    for (const auto& hold : holds) Release(hold);
    return;
  }
  if (result.code() == StatusCode::kInvalidArgument) {
    metrics_.events_rejected.Inc();
    if (LogThisOccurrence(metrics_.events_rejected.value())) {
      LogWarning("pipeline", "event rejected by Kafka for good; counted and skipped",
                 {{"rule", rule},
                  {"error", result.ToString()},
                  {"rejected", metrics_.events_rejected.value()}});
    }
    for (const auto& hold : holds) Release(hold);
    return;
  }
  ++undelivered_;
  metrics_.events_undelivered.Inc();
  if (LogThisOccurrence(metrics_.events_undelivered.value())) {
    LogError("pipeline", "event not delivered; its source's checkpoint stays before it",
             {{"rule", rule},
              {"error", result.ToString()},
              {"undelivered", metrics_.events_undelivered.value()}});
  }
  for (const auto& hold : holds) Freeze(hold);
}

void Pipeline::Hold(const Suppressor::Hold& hold) {
  Book& book = *books_[hold.holder];
  if (book.Has(hold.seq)) ++book.holds[hold.seq];
}

void Pipeline::Release(const Suppressor::Hold& hold) {
  Book& book = *books_[hold.holder];
  auto it = book.holds.find(hold.seq);
  if (it != book.holds.end() && --it->second == 0) book.holds.erase(it);
}

void Pipeline::Freeze(const Suppressor::Hold& hold) {
  // The record keeps its hold for good, so nothing at or after it commits.
  books_[hold.holder]->frozen = true;
}

void Pipeline::AdvanceCommits() {
  const SteadyTime now = clock_.MonotonicNow();
  std::size_t total = 0;
  for (std::size_t i = 0; i < books_.size(); ++i) {
    Book& book = *books_[i];
    Reader& reader = *readers_[i];
    // Committable: every record before the first one still held.
    const std::uint64_t limit = book.holds.empty() ? book.next_seq : book.holds.begin()->first;
    std::lock_guard lock(reader.mu);
    if (limit == book.next_seq && reader.to_commit.empty()) {
      // All committable (a window's hold released): hand the whole queue
      // over instead of copying it, so its cursors are never held twice.
      reader.to_commit.swap(book.cursors);
      book.first_seq = book.next_seq;
    }
    for (; !book.cursors.empty() && book.first_seq < limit; ++book.first_seq) {
      reader.to_commit.Push(book.cursors.Front());
      book.cursors.PopFront();
    }
    reader.uncommitted.store(book.cursors.size(), std::memory_order_relaxed);
    reader.settled.store(book.next_seq, std::memory_order_relaxed);
    total += book.cursors.size();
    if (!reader.to_commit.empty() || reader.uncommitted < options_.max_uncommitted_records) {
      reader.cv.notify_all();
    }
    const bool due = !reader.to_commit.empty() || reader.needs_save.load();
    if (due && now - book.last_wake >= options_.checkpoint_interval) {
      book.last_wake = now;
      if (reader.current_read) reader.current_read->request_stop();
    }
  }
  metrics_.uncommitted_records.Set(static_cast<double>(total));
}

// ---- control ----

std::size_t Pipeline::Stop(std::chrono::steady_clock::time_point deadline) {
  if (stopped_) return stop_result_;
  stopped_ = true;
  if (!started_) return 0;
  publish_deadline_ns_.store(ToNs(deadline));
  // 1. Stop reading; readers push what they hold.
  for (auto& reader : readers_) reader->thread.request_stop();
  for (auto& reader : readers_) {
    if (reader->thread.joinable()) reader->thread.join();
  }
  // 2. The match thread drains the queue, matching and publishing.
  queue_.Close();
  if (matcher_.joinable()) matcher_.join();
  // From here this thread owns the bookkeeping and runs the callbacks.
  // 3. Folded repeats must not be lost: publish their follow-ups now.
  std::vector<Suppressor::FollowUp> follow_ups;
  suppressor_.TakeAll(follow_ups);
  PublishFollowUps(follow_ups);
  // 4. Flush with what is left of the grace period.
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.MonotonicNow());
  sink_.Flush(std::max(left, std::chrono::milliseconds(0)));
  // 5. Commit what was delivered and save every checkpoint.
  AdvanceCommits();
  for (auto& reader : readers_) {
    reader->last_save = {};  // force the save
    ApplyCommits(*reader);
  }
  stop_result_ = undelivered_ + in_flight_;
  // Callbacks that might still come from the sink must not count twice.
  undelivered_ = stop_result_;
  in_flight_ = 0;
  return stop_result_;
}

bool Pipeline::healthy() const {
  if (!started_ || match_done_) return false;
  for (const auto& reader : readers_) {
    if (reader->failed) return false;
  }
  const auto since = clock_.MonotonicNow().time_since_epoch() -
                     std::chrono::nanoseconds(heartbeat_ns_.load(std::memory_order_relaxed));
  return since < std::chrono::seconds(30);
}

bool PipelineTesting::Idle(const Pipeline& p) {
  if (p.queue_.size() != 0) return false;
  for (const auto& reader : p.readers_) {
    if (!reader->exhausted || reader->uncommitted.load() != 0 ||
        reader->settled.load() != reader->pushed.load()) {
      return false;
    }
    std::lock_guard lock(reader->mu);
    if (!reader->to_commit.empty()) return false;
  }
  return true;
}

}  // namespace faultline
