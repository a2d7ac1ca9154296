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
// Optionally bounded in bytes too: each item is pushed with its cost (the
// bytes it holds), and a push waits while the queued cost would pass
// `max_cost`, unless the queue is empty (one item larger than the bound
// still goes through, alone). Records of 250 KiB would otherwise make a
// queue of 64 batches of 256 records hold gigabytes.
//
// Close() ends the stream: Push() then fails at once, and Pop() returns the
// items still queued, then nullopt. Thread-safe; any number of producers and
// consumers.
template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity, std::size_t max_cost = 0)
      : capacity_(capacity == 0 ? 1 : capacity), max_cost_(max_cost) {}

  // Waits while the queue is full. Returns false (dropping `item`) only if
  // the queue is or becomes closed.
  bool Push(T item, std::size_t cost = 0) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] {
      return closed_ || (items_.size() < capacity_ &&
                         (items_.empty() || max_cost_ == 0 || cost_ + cost <= max_cost_));
    });
    if (closed_) return false;
    items_.push_back({std::move(item), cost});
    cost_ += cost;
    not_empty_.notify_one();
    return true;
  }

  // Waits up to `timeout` for an item. nullopt: nothing within the timeout,
  // or closed and drained (see closed_and_empty()).
  std::optional<T> Pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front().first);
    cost_ -= items_.front().second;
    items_.pop_front();
    // Several small pushes may fit where one large item left.
    not_full_.notify_all();
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
  // The cost of the items queued now.
  std::size_t cost() const {
    std::lock_guard lock(mu_);
    return cost_;
  }

 private:
  const std::size_t capacity_;
  const std::size_t max_cost_;  // 0: no bound
  mutable std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<std::pair<T, std::size_t>> items_;  // item, cost
  std::size_t cost_ = 0;
  bool closed_ = false;
};

}  // namespace faultline
