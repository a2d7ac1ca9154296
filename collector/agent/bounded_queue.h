// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace faultline {

// A fixed-capacity FIFO between the agent's reader threads (producers) and
// its match thread (consumer). A full queue makes producers wait: that is the
// agent's backpressure, and why sources must be able to pause (their cursor
// lets them resume; kmsg counts what the kernel overwrote meanwhile).
//
// Close() ends the stream: Push() then fails at once, and Pop() returns the
// items still queued, then nullopt. Thread-safe; any number of producers and
// consumers.
template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  // Waits while the queue is full. Returns false (dropping `item`) only if
  // the queue is or becomes closed.
  bool Push(T item) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Waits up to `timeout` for an item. nullopt: nothing within the timeout,
  // or closed and drained (see closed_and_empty()).
  std::optional<T> Pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  bool closed_and_empty() const {
    std::lock_guard lock(mu_);
    return closed_ && items_.empty();
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }
  std::size_t capacity() const { return capacity_; }

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace faultline
