// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/log_record.h"
#include "collector/agent/agent_metrics.h"
#include "collector/agent/bounded_queue.h"
#include "collector/agent/event_sink.h"
#include "collector/agent/evidence_ring.h"
#include "collector/agent/suppressor.h"
#include "collector/sources/source.h"
#include "matcher/rule_set.h"

namespace faultline {

// The agent's engine (every thread has one owner; shutdown runs in order):
//
//   reader thread per Source ─► BoundedQueue<batch> ─► match thread:
//     RuleSet snapshot per batch → Match → Suppressor → MakeFaultEvent →
//     EventSink::Publish; EventSink::Poll → delivery callbacks → commits
//
// A folded repeat costs its match, a suppression key and a hash lookup: the
// event is built for first occurrences and, once per batch, for the last
// repeat of each suppression entry (the one a follow-up carries).
//
// At least once: a source's checkpoint moves past a record only when every
// event from it and from every earlier record is acknowledged (or rejected
// for good). A delivery that fails retriably freezes that source's
// checkpoint for the rest of the run: later events are still sent, and after
// a restart everything from the frozen point is read and sent again, with
// the same event ids. Records folded by suppression are held until the
// follow-up event that counts them is delivered; since every later record
// of the source waits behind them, a window's follow-up goes out early once
// Options::suppression_flush_records records wait (FlushHeldFolds).
//
// Threads: Start() spawns one reader per source and one match thread. All
// delivery bookkeeping lives on the match thread, which is also the thread
// that runs the sink's callbacks, so it takes no lock. Source::Commit and
// SaveCheckpoint run on the source's own reader thread (source.h promises
// sources need no locks): the match thread hands committable cursors over,
// and wakes a reader blocked in Read() (by requesting the stop token of that
// one Read call) when its checkpoint is due.
//
// Public methods are called from one controlling thread (main).
class Pipeline {
 public:
  struct Options {
    std::string node_name;
    std::string boot_id;
    std::size_t max_batch_records = 256;
    std::size_t max_queued_batches = 8;  // when full, sources wait: backpressure
    // Memory bounds for long lines: a Read() stops at max_batch_bytes of
    // text (Source::set_max_batch_bytes), and readers wait while the queued
    // batches hold max_queued_bytes (text, cursors and labels).
    std::size_t max_batch_bytes = std::size_t{4} << 20;
    std::size_t max_queued_bytes = std::size_t{16} << 20;
    // Records read but not yet committable, per source, before its reader
    // waits (bounds the memory of held cursors during an outage or flood).
    std::size_t max_uncommitted_records = 250'000;
    // When this many records of a source wait behind a suppression window's
    // hold (its first folded repeat), that window's follow-up is sent early,
    // so the source's commits pass it and its reader never reaches
    // max_uncommitted_records behind an open window. Must be below it.
    std::size_t suppression_flush_records = 10'000;
    // Lines of the same source attached to a tainting event as its evidence
    // (FaultEvent::evidence; at most FaultEvent::kMaxEvidenceLines); 0: none.
    std::size_t evidence_lines = 8;
    std::chrono::milliseconds poll_interval{100};
    std::chrono::milliseconds checkpoint_interval{1000};
    std::chrono::milliseconds read_error_backoff{1000};
    Suppressor::Options suppression;
  };

  // `rules`, `sink`, `clock` and `metrics` must outlive the pipeline.
  Pipeline(std::vector<std::unique_ptr<Source>> sources, const RuleSetHolder& rules,
           EventSink& sink, const Clock& clock, AgentMetrics& metrics, Options options);
  ~Pipeline();  // Stop()s with no grace if still running.

  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void Start();

  // Shuts down in order: stop reading; match and publish what was already
  // read (publishing gives up at `deadline`); publish pending suppression
  // follow-ups; flush the sink until `deadline`; commit and save each
  // source's checkpoint up to the last record whose events were all
  // delivered. Returns how many events were not delivered (failed,
  // still queued, or never handed to the sink). Idempotent. `deadline` is
  // in the monotonic time of the Clock the pipeline was given.
  std::size_t Stop(std::chrono::steady_clock::time_point deadline);

  // For /healthz: the match thread is looping and no source ended with an
  // error. For /readyz the agent adds rules and Kafka.
  bool healthy() const;

 private:
  friend struct PipelineTesting;  // collector/agent/pipeline_testing.h
  struct Reader;
  struct Book;
  struct Batch {
    std::size_t source = 0;
    std::vector<LogRecord> records;
  };
  // A match of the batch being processed, kept until the batch ends so that
  // the suppressor can build the event of a folded repeat only if it is the
  // last one (Suppressor::AdmitMatch).
  struct BatchMatch {
    std::size_t record = 0;  // index in Batch::records
    RuleMatch match;
  };

  void ReadLoop(Reader& reader, std::stop_token stop);
  // An empty records vector for the next batch, with capacity for a batch.
  std::vector<LogRecord> TakeSpareRecords();
  void GiveBackRecords(std::vector<LogRecord> records);
  void ApplyCommits(Reader& reader);
  void MatchLoop(std::stop_token stop);
  void Process(Batch& batch);
  void PublishFollowUps(std::vector<Suppressor::FollowUp>& follow_ups);
  // Sends early the follow-ups of the windows that hold too many records of
  // `source` behind them (Options::suppression_flush_records).
  void FlushHeldFolds(std::size_t source);
  // Publishes, retrying while the sink is full. False if it gave up at the
  // shutdown deadline (the event counts as undelivered, its holds stay).
  bool PublishWithRetry(const FaultEvent& event, const std::vector<Suppressor::Hold>& holds);
  void OnDelivered(const std::vector<Suppressor::Hold>& holds, const Status& result,
                   std::chrono::steady_clock::time_point published_at, const std::string& rule);
  void Hold(const Suppressor::Hold& hold);
  void Release(const Suppressor::Hold& hold);
  void Freeze(const Suppressor::Hold& hold);
  // Moves committable cursors to the readers; wakes readers whose checkpoint
  // is due.
  void AdvanceCommits();

  std::vector<std::unique_ptr<Reader>> readers_;
  std::vector<std::unique_ptr<Book>> books_;  // indexed like readers_; match thread only
  const RuleSetHolder& rules_;
  EventSink& sink_;
  const Clock& clock_;
  AgentMetrics& metrics_;
  const Options options_;

  BoundedQueue<Batch> queue_;
  // Emptied batch vectors go back to the readers with their capacity, so a
  // batch costs no large allocation (glibc consolidates its free lists on
  // each one).
  std::mutex spare_mu_;
  std::vector<std::vector<LogRecord>> spare_records_;  // guarded by spare_mu_
  Suppressor suppressor_;                              // match thread only
  std::vector<RuleMatch> matches_;
  std::vector<BatchMatch> batch_matches_;  // match thread only
  std::vector<Suppressor::FollowUp> follow_ups_;
  std::unordered_map<std::string, Counter*> match_counters_;
  std::uint64_t in_flight_ = 0;        // published, no callback yet
  std::uint64_t undelivered_ = 0;      // failed retriably, or never published
  std::uint64_t next_bypass_log_ = 1;  // suppressor_.bypassed() that is logged next

  std::atomic<std::int64_t> publish_deadline_ns_{INT64_MAX};  // clock_.MonotonicNow(), for shutdown
  std::atomic<std::int64_t> heartbeat_ns_{0};
  std::atomic<bool> match_done_{false};
  std::atomic<bool> started_{false};  // read by healthy() on the HTTP thread
  bool stopped_ = false;
  std::size_t stop_result_ = 0;
  std::jthread matcher_;
};

}  // namespace faultline
