// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/status.h"
#include "tainter/core/node_model.h"
#include "tainter/kube/backoff.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// Keeps the tainter's picture of one kind of object current, the client-go
// informer way: list (with the list's resourceVersion), then watch from that
// version; when a watch ends (server timeout, connection lost), watch again
// from the last version seen; on 410 Gone (the version was compacted away),
// list again. So a by-hand untaint, a `kubectl edit` or another replica's
// write reaches the tainter within the watch's latency instead of at the
// next poll.
//
// The list and the watch run on the informer's own thread, through their
// own client (one client per thread, node_api.h); the owner takes the
// changes with Take() on its thread and applies them.
//
// `ObjectKind` says which objects (NodeKind in node_informer.h, PodKind in
// pod_informer.h): its Object, Listing and Event types, the Api it lists and
// watches through (NodeWatchApi, PodApi), its name for logs and metrics,
// the selector it watches by default, and the calls:
//   static Result<Listing> List(Api&, std::string_view selector);
//   static Status Watch(Api&, std::string_view selector,
//                       std::string_view version, std::chrono::seconds timeout,
//                       const std::function<bool(const Event&)>&, const std::atomic<bool>*);
//   static std::vector<Object>& Objects(Listing&);
//   static const Object& ObjectOf(const Event&);
//
// While the API server is away, the informer backs off like every other
// call (Options: exponential with full jitter, reset by a call that works)
// and logs the failure streak twice: a warning at its first failure and a
// line when a call works again, with how many failed and for how long. The
// failures in between are counted (restarts_total{why="error"}) and logged
// at debug.
//
// Metrics: faultline_tainter_<name>_watch_restarts_total{why=timeout|error|gone}.
//
// Thread-safety: Take(), synced(), failing() and Stop() from
// any one thread.
template <typename ObjectKind>
class Informer {
 public:
  using Object = typename ObjectKind::Object;
  struct Options {
    std::string selector =
        ObjectKind::kDefaultSelector;  // a label or field selector, as ObjectKind lists
    std::chrono::seconds watch_timeout{std::chrono::minutes(5)};
    // After a failed list or watch: exponential backoff with full jitter
    // (tainter/kube/backoff.h) from retry_delay up to max_retry_delay,
    // back to retry_delay after a call succeeds.
    std::chrono::milliseconds retry_delay{std::chrono::seconds(1)};
    std::chrono::milliseconds max_retry_delay{std::chrono::seconds(30)};
    std::uint64_t jitter_seed = 0;  // 0: random; tests pass a fixed one
  };
  // What changed since the last Take(), in order.
  using Change = WatchChange<Object>;

  // `api` is used only on the informer's thread and must outlive it, as
  // must `clock` (it times the pause after a failed call).
  Informer(typename ObjectKind::Api& api, Options options, MetricsRegistry& metrics,
           const Clock& clock = RealClock())
      : api_(api),
        options_(std::move(options)),
        restarts_gone_(Restarts(metrics, "gone")),
        restarts_error_(Restarts(metrics, "error")),
        restarts_timeout_(Restarts(metrics, "timeout")),
        clock_(clock),
        backoff_(options_.retry_delay, std::max(options_.retry_delay, options_.max_retry_delay),
                 options_.jitter_seed) {}
  ~Informer() { Stop(); }
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start() {
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<Change> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Change> out;
    out.swap(changes_);
    return out;
  }
  // A list has succeeded at least once.
  bool synced() const { return synced_.load(); }
  // The last list or watch call failed (API server unreachable, RBAC).
  bool failing() const { return failing_.load(); }

 private:
  using Event = typename ObjectKind::Event;
  using ChangeKind = typename Change::Kind;

  void Push(Change change) {
    std::lock_guard<std::mutex> lock(mu_);
    if (change.kind == ChangeKind::kList) changes_.clear();  // the list supersedes them
    changes_.push_back(std::move(change));
  }

  // A list or watch call failed: the first failure of a streak is a
  // warning, the rest debug lines; then the backoff's wait (less when
  // stopping).
  void Failed(std::string_view what, const Status& error, std::string_view version) {
    failing_ = true;
    if (streak_ == 0) streak_started_ = clock_.MonotonicNow();
    ++streak_;
    nlohmann::json fields = {{"error", error.ToString()}};
    if (!version.empty()) fields["resource_version"] = std::string(version);
    const auto delay = backoff_.Delay(streak_ - 1);
    fields["retry_in_ms"] = delay.count();
    if (streak_ == 1) {
      LogWarning("tainter",
                 std::string(ObjectKind::kName) + " " + std::string(what) +
                     " failed; retrying with backoff (logged again when it works)",
                 fields);
    } else {
      fields["failures"] = streak_;
      LogDebug("tainter",
               std::string(ObjectKind::kName) + " " + std::string(what) + " failed again", fields);
    }
    const auto until = clock_.MonotonicNow() + delay;
    while (!stop_ && clock_.MonotonicNow() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // A list or watch call worked: the streak, if any, ends (one line) and
  // the backoff starts over.
  void Worked() {
    failing_ = false;
    if (streak_ == 0) return;
    const auto lasted = std::chrono::duration_cast<std::chrono::milliseconds>(
        clock_.MonotonicNow() - streak_started_);
    LogInfo("tainter", std::string(ObjectKind::kName) + " watch works again",
            {{"failures", streak_}, {"failing_for_ms", lasted.count()}});
    streak_ = 0;
  }

  // faultline_tainter_<kind>_watch_restarts_total{why}, one series per why,
  // created with the informer.
  static Counter& Restarts(MetricsRegistry& metrics, const char* why) {
    const std::string name(ObjectKind::kName);
    return metrics.GetCounter("faultline_tainter_" + name + "_watch_restarts_total",
                              name + " watches started again, by why the last one ended",
                              {{"why", why}});
  }

  void Run() {
    const std::string name(ObjectKind::kName);
    while (!stop_) {
      auto listing = ObjectKind::List(api_, options_.selector);
      if (!listing) {
        Failed("list", listing.error(), {});
        continue;
      }
      Worked();
      std::string version = listing->resource_version;
      Push({ChangeKind::kList, std::move(ObjectKind::Objects(*listing))});
      synced_ = true;
      LogDebug("tainter", "listed " + name + "s", {{"resource_version", version}});
      // Watch from the list's version until it is too old.
      while (!stop_) {
        Status s = ObjectKind::Watch(
            api_, options_.selector, version, options_.watch_timeout,
            [&](const Event& e) {
              Worked();  // the stream delivers: the server is back
              const Object& object = ObjectKind::ObjectOf(e);
              if (!object.resource_version.empty()) version = object.resource_version;
              switch (e.type) {
                case Event::Type::kBookmark:
                  break;
                case Event::Type::kDeleted:
                  Push({ChangeKind::kDeleted, {object}});
                  break;
                default:
                  Push({ChangeKind::kUpsert, {object}});
                  break;
              }
              return !stop_.load();
            },
            &stop_);
        if (stop_) return;
        if (s.code() == StatusCode::kOutOfRange) {
          restarts_gone_.Inc();
          LogInfo("tainter", name + " watch expired (410 Gone); listing again",
                  {{"resource_version", version}});
          break;  // re-list
        }
        if (!s.ok()) {
          restarts_error_.Inc();
          Failed("watch", s, version);
          continue;
        }
        Worked();
        restarts_timeout_.Inc();
      }
    }
  }

  typename ObjectKind::Api& api_;
  const Options options_;
  Counter& restarts_gone_;     // 410 Gone: the watch's resourceVersion is too old
  Counter& restarts_error_;    // the watch failed
  Counter& restarts_timeout_;  // the watch ran its time (the normal end)
  const Clock& clock_;
  Backoff backoff_;  // the wait after a failed call
  int streak_ = 0;   // calls failed in a row (the thread's own)
  std::chrono::steady_clock::time_point streak_started_{};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> failing_{false};
  std::mutex mu_;
  std::vector<Change> changes_;
};

}  // namespace faultline
