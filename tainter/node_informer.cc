// SPDX-License-Identifier: Apache-2.0
#include "tainter/node_informer.h"

#include "base/log.h"

namespace faultline {

NodeInformer::NodeInformer(NodeApi& api, Options options, MetricsRegistry& metrics)
    : api_(api), options_(std::move(options)), metrics_(metrics) {}

NodeInformer::~NodeInformer() { Stop(); }

void NodeInformer::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void NodeInformer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<NodeInformer::Change> NodeInformer::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Change> out;
  out.swap(changes_);
  return out;
}

void NodeInformer::Push(Change change) {
  std::lock_guard<std::mutex> lock(mu_);
  if (change.kind == Change::Kind::kList) changes_.clear();  // the list supersedes them
  changes_.push_back(std::move(change));
}

void NodeInformer::Pause() {
  const auto until = std::chrono::steady_clock::now() + options_.retry_delay;
  while (!stop_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void NodeInformer::Run() {
  auto restarts = [&](const char* why) -> Counter& {
    return metrics_.GetCounter("faultline_tainter_node_watch_restarts_total",
                               "node watches started again, by why the last one ended",
                               {{"why", why}});
  };
  while (!stop_) {
    Result<NodeListing> listing = api_.ListNodesAt(options_.label_selector);
    if (!listing) {
      failing_ = true;
      LogWarning("tainter", "cannot list nodes; will retry",
                 {{"error", listing.error().ToString()}});
      Pause();
      continue;
    }
    failing_ = false;
    std::string version = listing->resource_version;
    Push({Change::Kind::kList, std::move(listing->nodes)});
    synced_ = true;
    LogDebug("tainter", "listed nodes", {{"resource_version", version}});
    // Watch from the list's version until it is too old.
    while (!stop_) {
      Status s = api_.WatchNodes(
          options_.label_selector, version, options_.watch_timeout,
          [&](const NodeWatchEvent& e) {
            if (!e.node.resource_version.empty()) version = e.node.resource_version;
            switch (e.type) {
              case NodeWatchEvent::Type::kBookmark:
                break;
              case NodeWatchEvent::Type::kDeleted:
                Push({Change::Kind::kDeleted, {e.node}});
                break;
              default:
                Push({Change::Kind::kUpsert, {e.node}});
                break;
            }
            return !stop_.load();
          },
          &stop_);
      if (stop_) return;
      if (s.code() == StatusCode::kOutOfRange) {
        restarts("gone").Inc();
        LogInfo("tainter", "node watch expired (410 Gone); listing again",
                {{"resource_version", version}});
        break;  // re-list
      }
      if (s.code() == StatusCode::kFailedPrecondition) return;  // this API cannot watch
      if (!s.ok()) {
        failing_ = true;
        restarts("error").Inc();
        LogWarning("tainter", "node watch failed; resuming",
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
