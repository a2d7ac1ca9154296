// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "collector/sources/source.h"

namespace faultline {

// A Source fed by the test: Add() lines, Finish() to make it finite. Read()
// waits with condition_variable_any::wait(lock, stop, pred), so a stop
// request returns it at once. Cursors are "<name>:<n>", n counting from 1.
// Records what the pipeline commits and saves. Thread-safe.
class FakeSource final : public Source {
 public:
  explicit FakeSource(std::string name = "fake", Origin origin = Origin::kKernel)
      : name_(std::move(name)), origin_(origin) {}

  void Add(std::string text) {
    std::lock_guard lock(mu_);
    LogRecord record;
    record.source = name_;
    record.origin = origin_;
    record.text = std::move(text);
    record.cursor = name_ + ":" + std::to_string(++added_);
    pending_.push_back(std::move(record));
    cv_.notify_all();
  }
  // After the lines added so far, Read() returns kOutOfRange.
  void Finish() {
    std::lock_guard lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }
  // The next Read() returns this error (once).
  void FailNextRead(Status error) {
    std::lock_guard lock(mu_);
    read_error_ = std::move(error);
    cv_.notify_all();
  }

  std::vector<std::string> committed() const {
    std::lock_guard lock(mu_);
    return committed_;
  }
  std::string last_committed() const {
    std::lock_guard lock(mu_);
    return committed_.empty() ? std::string() : committed_.back();
  }
  // The cursor written by the last SaveCheckpoint() ("" if none).
  std::string saved() const {
    std::lock_guard lock(mu_);
    return saved_;
  }
  int saves() const {
    std::lock_guard lock(mu_);
    return saves_;
  }
  // Records handed out by Read() so far.
  std::uint64_t read_count() const {
    std::lock_guard lock(mu_);
    return stats_.records;
  }
  std::size_t pending() const {
    std::lock_guard lock(mu_);
    return pending_.size();
  }

  std::string_view name() const override { return name_; }

  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, stop, [&] { return !pending_.empty() || finished_ || !read_error_.ok(); });
    if (!read_error_.ok()) {
      Status error = std::move(read_error_);
      read_error_ = OkStatus();
      return error;
    }
    while (!pending_.empty() && max_records-- > 0) {
      stats_.records++;
      stats_.bytes += pending_.front().text.size();
      out.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    if (pending_.empty() && finished_) return OutOfRangeError("finished");
    return OkStatus();
  }

  void Commit(std::string_view cursor) override {
    std::lock_guard lock(mu_);
    committed_.emplace_back(cursor);
  }

  Status SaveCheckpoint() override {
    std::lock_guard lock(mu_);
    ++saves_;
    if (!committed_.empty()) saved_ = committed_.back();
    return OkStatus();
  }

  SourceStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  const std::string name_;
  const Origin origin_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<LogRecord> pending_;
  std::uint64_t added_ = 0;
  bool finished_ = false;
  Status read_error_;
  std::vector<std::string> committed_;
  std::string saved_;
  int saves_ = 0;
  SourceStats stats_;
};

}  // namespace faultline
