// SPDX-License-Identifier: Apache-2.0
#include "tainter/pod_informer.h"

#include "base/log.h"

namespace faultline {

PodInformer::PodInformer(NodeApi& api, Options options, MetricsRegistry& metrics)
    : api_(api), options_(std::move(options)), metrics_(metrics) {}

PodInformer::~PodInformer() { Stop(); }

void PodInformer::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void PodInformer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<PodInformer::Change> PodInformer::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Change> out;
  out.swap(changes_);
  return out;
}

void PodInformer::Push(Change change) {
  std::lock_guard<std::mutex> lock(mu_);
  if (change.kind == Change::Kind::kList) changes_.clear();  // the list supersedes them
  changes_.push_back(std::move(change));
}

void PodInformer::Pause() {
  const auto until = std::chrono::steady_clock::now() + options_.retry_delay;
  while (!stop_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void PodInformer::Run() {
  auto restarts = [&](const char* why) -> Counter& {
    return metrics_.GetCounter("faultline_tainter_pod_watch_restarts_total",
                               "pod watches started again, by why the last one ended",
                               {{"why", why}});
  };
  while (!stop_) {
    Result<PodListing> listing = api_.ListPodsAt(options_.field_selector);
    if (!listing && listing.error().code() == StatusCode::kFailedPrecondition) {
      unsupported_ = true;
      return;
    }
    if (!listing) {
      failing_ = true;
      LogWarning("tainter", "cannot list pods; will retry",
                 {{"error", listing.error().ToString()}});
      Pause();
      continue;
    }
    failing_ = false;
    std::string version = listing->resource_version;
    Push({Change::Kind::kList, std::move(listing->pods)});
    synced_ = true;
    LogDebug("tainter", "listed pods", {{"resource_version", version}});
    // Watch from the list's version until it is too old.
    while (!stop_) {
      Status s = api_.WatchPods(
          options_.field_selector, version, options_.watch_timeout,
          [&](const PodWatchEvent& e) {
            if (!e.pod.resource_version.empty()) version = e.pod.resource_version;
            switch (e.type) {
              case PodWatchEvent::Type::kBookmark:
                break;
              case PodWatchEvent::Type::kDeleted:
                Push({Change::Kind::kDeleted, {e.pod}});
                break;
              default:
                Push({Change::Kind::kUpsert, {e.pod}});
                break;
            }
            return !stop_.load();
          },
          &stop_);
      if (stop_) return;
      if (s.code() == StatusCode::kOutOfRange) {
        restarts("gone").Inc();
        LogInfo("tainter", "pod watch expired (410 Gone); listing again",
                {{"resource_version", version}});
        break;  // re-list
      }
      if (s.code() == StatusCode::kFailedPrecondition) return;  // this API cannot watch
      if (!s.ok()) {
        failing_ = true;
        restarts("error").Inc();
        LogWarning("tainter", "pod watch failed; resuming",
                   {{"error", s.ToString()}, {"resource_version", version}});
        Pause();
        continue;
      }
      failing_ = false;
      restarts("timeout").Inc();
    }
  }
}

}  // namespace faultline
