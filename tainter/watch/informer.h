// SPDX-License-Identifier: Apache-2.0
#pragma once

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
// own NodeApi (one client per thread, node_api.h); the owner takes the
// changes with Take() on its thread and applies them.
//
// `ObjectKind` says which objects (NodeKind in node_informer.h, PodKind in
// pod_informer.h): its Object, Listing and Event types, its name for logs
// and metrics, the selector it watches by default, and the NodeApi calls:
//   static Result<Listing> List(NodeApi&, std::string_view selector);
//   static Status Watch(NodeApi&, std::string_view selector,
//                       std::string_view version, std::chrono::seconds timeout,
//                       const std::function<bool(const Event&)>&, const std::atomic<bool>*);
//   static std::vector<Object>& Objects(Listing&);
//   static const Object& ObjectOf(const Event&);
//
// Metrics: faultline_tainter_<name>_watch_restarts_total{why=timeout|error|gone}.
//
// Thread-safety: Take(), synced(), failing(), unsupported() and Stop() from
// any one thread.
template <typename ObjectKind>
class Informer {
 public:
  using Object = typename ObjectKind::Object;
  struct Options {
    std::string selector =
        ObjectKind::kDefaultSelector;  // a label or field selector, as ObjectKind lists
    std::chrono::seconds watch_timeout{std::chrono::minutes(5)};
    std::chrono::milliseconds retry_delay{std::chrono::seconds(1)};  // after a failed call
  };
  // What changed since the last Take(), in order.
  using Change = WatchChange<Object>;

  // `api` is used only on the informer's thread and must outlive it, as
  // must `clock` (it times the pause after a failed call).
  Informer(NodeApi& api, Options options, MetricsRegistry& metrics,
           const Clock& clock = RealClock())
      : api_(api),
        options_(std::move(options)),
        restarts_gone_(Restarts(metrics, "gone")),
        restarts_error_(Restarts(metrics, "error")),
        restarts_timeout_(Restarts(metrics, "timeout")),
        clock_(clock) {}
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
  // This NodeApi cannot list or watch these objects: the informer has
  // stopped for good (its owner goes on without them).
  bool unsupported() const { return unsupported_.load(); }

 private:
  using Event = typename ObjectKind::Event;
  using ChangeKind = typename Change::Kind;

  void Push(Change change) {
    std::lock_guard<std::mutex> lock(mu_);
    if (change.kind == ChangeKind::kList) changes_.clear();  // the list supersedes them
    changes_.push_back(std::move(change));
  }

  void Pause() {  // retry_delay, or less when stopping
    const auto until = clock_.MonotonicNow() + options_.retry_delay;
    while (!stop_ && clock_.MonotonicNow() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
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
      if (!listing && listing.error().code() == StatusCode::kFailedPrecondition) {
        unsupported_ = true;
        return;
      }
      if (!listing) {
        failing_ = true;
        LogWarning("tainter", "cannot list " + name + "s; will retry",
                   {{"error", listing.error().ToString()}});
        Pause();
        continue;
      }
      failing_ = false;
      std::string version = listing->resource_version;
      Push({ChangeKind::kList, std::move(ObjectKind::Objects(*listing))});
      synced_ = true;
      LogDebug("tainter", "listed " + name + "s", {{"resource_version", version}});
      // Watch from the list's version until it is too old.
      while (!stop_) {
        Status s = ObjectKind::Watch(
            api_, options_.selector, version, options_.watch_timeout,
            [&](const Event& e) {
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
        if (s.code() == StatusCode::kFailedPrecondition) {  // this API cannot watch
          unsupported_ = true;
          return;
        }
        if (!s.ok()) {
          failing_ = true;
          restarts_error_.Inc();
          LogWarning("tainter", name + " watch failed; resuming",
                     {{"error", s.ToString()}, {"resource_version", version}});
          Pause();
          continue;
        }
        failing_ = false;
        restarts_timeout_.Inc();
      }
    }
  }

  NodeApi& api_;
  const Options options_;
  Counter& restarts_gone_;     // 410 Gone: the watch's resourceVersion is too old
  Counter& restarts_error_;    // the watch failed
  Counter& restarts_timeout_;  // the watch ran its time (the normal end)
  const Clock& clock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> failing_{false};
  std::atomic<bool> unsupported_{false};
  std::mutex mu_;
  std::vector<Change> changes_;
};

}  // namespace faultline
