// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <ostream>
#include <utility>

#include "base/clock.h"
#include "base/fault_event.h"
#include "collector/agent/event_sink.h"
#include "tainter/apply/node_applier.h"

namespace faultline {

// The EventSink of `faultline-agent --standalone`: hands each event to an
// in-process Tainter (policy + applier) instead of Kafka.
//
// Publish() only queues (bounded: kResourceExhausted past `max_queued`, and
// the pipeline polls and retries, so a slow API server backpressures the
// sources as a Kafka outage does). Poll() and Flush(), on the pipeline's
// match thread, run Tainter::Handle for the queued events and Tainter::Tick
// about once a second (expiry, retries, resync). An event's delivery
// callback runs (OK) once the Tainter calls its `done`: the decision was
// applied, or deliberately dropped (duplicate, below threshold, ...), so a
// source's checkpoint never passes an event whose taint is not on the node.
// A write the API refuses retriably stays in the Tainter's queue; its
// callback runs when a later Tick() applies it.
//
// `report`, when set (dry run), gets one "detected" block per event before
// the Tainter acts on it (the rule, summary and log line); the NodeApi
// prints the writes below it. `on_handled` runs after each event's callback
// (the demo waits on it).
//
// Thread-safety: EventSink's contract (one thread at a time). The Tainter
// is used only from that thread once the pipeline runs. api_reachable() may
// be read from any thread.
class StandaloneSink final : public EventSink {
 public:
  struct Options {
    std::size_t max_queued = 1024;
    std::chrono::milliseconds tick_interval{1000};
    std::ostream* report = nullptr;
    std::function<void(const FaultEvent&)> on_handled;
  };

  // `tainter` and `clock` must outlive the sink.
  StandaloneSink(Tainter& tainter, const Clock& clock, Options options);

  Status Publish(const FaultEvent& event, DeliveryCallback on_delivered) override;
  void Poll(std::chrono::milliseconds timeout) override;
  std::size_t Flush(std::chrono::milliseconds timeout) override;

  // The Tainter's view of the API server after the last call.
  bool api_reachable() const { return api_reachable_.load(std::memory_order_relaxed); }

 private:
  // Hands the queued events to the Tainter and ticks when due; true if it
  // did anything.
  bool Work();
  void Report(const FaultEvent& event);

  Tainter& tainter_;
  const Clock& clock_;
  const Options options_;
  std::deque<std::pair<FaultEvent, DeliveryCallback>> queue_;
  std::size_t waiting_ = 0;  // handed to the Tainter, `done` not yet called
  std::chrono::steady_clock::time_point next_tick_{};
  std::atomic<bool> api_reachable_{true};
};

}  // namespace faultline
