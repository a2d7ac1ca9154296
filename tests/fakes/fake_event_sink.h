// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

#include "collector/agent/event_sink.h"

namespace faultline {

// An in-memory EventSink that behaves like KafkaSink: Publish() queues (up to
// `capacity`, then kResourceExhausted), callbacks run only inside Poll() or
// Flush(). While "connected" (the default) Poll() delivers everything queued;
// Disconnect() holds events back, like a broker outage. FailNext() makes the
// next deliveries fail with a given status. Thread-safe: the test thread
// steers and inspects while the pipeline's match thread publishes and polls.
class FakeEventSink final : public EventSink {
 public:
  explicit FakeEventSink(std::size_t capacity = 1000) : capacity_(capacity) {}

  void Connect() {
    std::lock_guard lock(mu_);
    connected_ = true;
    cv_.notify_all();
  }
  void Disconnect() {
    std::lock_guard lock(mu_);
    connected_ = false;
  }
  void FailNext(Status error) {
    std::lock_guard lock(mu_);
    failures_.push_back(std::move(error));
  }

  std::vector<FaultEvent> delivered() const {
    std::lock_guard lock(mu_);
    return delivered_;
  }
  std::size_t published() const {
    std::lock_guard lock(mu_);
    return published_;
  }
  std::size_t queued() const {
    std::lock_guard lock(mu_);
    return queue_.size();
  }
  std::size_t full_rejections() const {
    std::lock_guard lock(mu_);
    return full_rejections_;
  }

  Status Publish(const FaultEvent& event, DeliveryCallback on_delivered) override {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      ++full_rejections_;
      return ResourceExhaustedError("fake sink full");
    }
    ++published_;
    queue_.push_back({event, std::move(on_delivered)});
    cv_.notify_all();
    return OkStatus();
  }

  void Poll(std::chrono::milliseconds timeout) override {
    std::vector<std::pair<Item, Status>> done;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, timeout, [&] { return connected_ && !queue_.empty(); });
      if (connected_) done = TakeAll();
    }
    for (auto& [item, status] : done) item.callback(status);
  }

  std::size_t Flush(std::chrono::milliseconds timeout) override {
    if (queued() > 0) Poll(timeout);
    std::lock_guard lock(mu_);
    return queue_.size();
  }

 private:
  struct Item {
    FaultEvent event;
    DeliveryCallback callback;
  };

  std::vector<std::pair<Item, Status>> TakeAll() {
    std::vector<std::pair<Item, Status>> done;
    while (!queue_.empty()) {
      Status status;
      if (!failures_.empty()) {
        status = std::move(failures_.front());
        failures_.pop_front();
      }
      if (status.ok()) delivered_.push_back(queue_.front().event);
      done.emplace_back(std::move(queue_.front()), std::move(status));
      queue_.pop_front();
    }
    return done;
  }

  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::deque<Status> failures_;
  std::vector<FaultEvent> delivered_;
  std::size_t published_ = 0;
  std::size_t full_rejections_ = 0;
  bool connected_ = true;
};

}  // namespace faultline
