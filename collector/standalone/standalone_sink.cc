// SPDX-License-Identifier: Apache-2.0
#include "collector/standalone/standalone_sink.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "base/time_format.h"
#include "base/vocabulary.h"

namespace faultline {

StandaloneSink::StandaloneSink(Tainter& tainter, const Clock& clock, Options options)
    : tainter_(tainter), clock_(clock), options_(std::move(options)) {}

Status StandaloneSink::Publish(const FaultEvent& event, DeliveryCallback on_delivered) {
  // Not handled here: the callback must not run inside Publish (the
  // pipeline counts the event in flight only after Publish returns).
  if (queue_.size() >= options_.max_queued) {
    return ResourceExhaustedError("standalone: " + std::to_string(queue_.size()) +
                                  " events wait for the tainter");
  }
  queue_.emplace_back(event, std::move(on_delivered));
  return OkStatus();
}

void StandaloneSink::Report(const FaultEvent& event) {
  std::ostream& out = *options_.report;
  out << "\n== detected " << event.rule << " (" << SeverityName(event.severity) << ", action "
      << ActionName(event.action) << ") on node " << event.node << ", source " << event.source
      << '\n'
      << "  summary: " << event.summary << '\n'
      << "  line:    " << event.message << '\n';
  if (event.suppressed > 0) out << "  (stands for " << event.suppressed + 1 << " lines)\n";
  out.flush();
}

bool StandaloneSink::Work() {
  bool worked = false;
  while (!queue_.empty()) {
    auto [event, callback] = std::move(queue_.front());
    queue_.pop_front();
    if (options_.report != nullptr) Report(event);
    ++waiting_;
    // Shared: `done` runs once, maybe from a later Tick(); the observer
    // needs the event after the Tainter has consumed its copy.
    auto handled = std::make_shared<FaultEvent>(options_.on_handled ? event : FaultEvent());
    tainter_.Handle(event, [this, cb = std::move(callback), handled] {
      --waiting_;
      cb(OkStatus());
      if (options_.on_handled) options_.on_handled(*handled);
    });
    worked = true;
  }
  const auto now = clock_.MonotonicNow();
  if (now >= next_tick_) {
    tainter_.Tick();
    next_tick_ = now + options_.tick_interval;
    worked = true;
  }
  api_reachable_.store(tainter_.api_reachable(), std::memory_order_relaxed);
  return worked;
}

void StandaloneSink::Poll(std::chrono::milliseconds timeout) {
  if (Work() || timeout.count() <= 0) return;
  // Nothing was due: wait a little (bounded by the timeout and the next
  // tick) rather than spin when the pipeline polls in a loop.
  const auto until_tick =
      std::chrono::duration_cast<std::chrono::milliseconds>(next_tick_ - clock_.MonotonicNow());
  std::this_thread::sleep_for(std::clamp(until_tick, std::chrono::milliseconds(1),
                                         std::max(timeout, std::chrono::milliseconds(1))));
  Work();
}

std::size_t StandaloneSink::Flush(std::chrono::milliseconds timeout) {
  const auto deadline = clock_.MonotonicNow() + timeout;
  for (;;) {
    Work();
    if (queue_.empty() && waiting_ == 0) return 0;
    const auto now = clock_.MonotonicNow();
    if (now >= deadline) break;
    // Pending writes are retried by Tick() after their backoff; tick often
    // so a recovered API server is used before the deadline.
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(100), deadline - now));
    next_tick_ = {};
  }
  return queue_.size() + waiting_;
}

}  // namespace faultline
