// SPDX-License-Identifier: Apache-2.0
// The applier's pod notices: after a new taint, a Warning Event on each pod
// of the node (which pods and what they say: tainter/core/pod_events.h).
//
// Which listing: one per node while few nodes are taken out (exact at the
// moment of the taint); in a storm, past pod_events.node_lists_per_minute,
// the new taints wait up to pod_events.batch_delay and share one listing of
// the cluster's running pods, unless they are fewer than that listing's
// pages were the last time (then a list per node is cheaper). So the
// listing costs a storm at most one request per taint, usually far less
// (tainter/README.md, "Telling the job").
#include <algorithm>
#include <map>
#include <optional>

#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/kube/node_pods.h"

namespace faultline {
namespace {

// Every running pod of the cluster: the per-node selector without the node
// (kube-apiserver selects pods by status.phase server-side).
constexpr std::string_view kRunningPods = "status.phase!=Succeeded,status.phase!=Failed";
// The page size of KubeNodeApi's pod listing (limit=500): a shared listing
// of N running pods cost about N / 500 requests.
constexpr std::size_t kPodPageSize = 500;
}  // namespace

// The pods on `node` by their own list; nullopt (counted and logged) when it
// fails.
std::optional<std::vector<PodInfo>> Tainter::ListNodePods(const std::string& node) {
  Result<std::vector<PodInfo>> pods = ListPodsOnNode(*api_.pods, node);
  if (pods) return std::move(*pods);
  m_.PodEvents("list_failed").Inc();
  LogWarning("tainter", "cannot list the node's pods to tell them",
             {{"node", node}, {"error", pods.error().ToString()}});
  return std::nullopt;
}

void Tainter::TellPods(const std::string& node, const Reason& reason) {
  if (api_.pods == nullptr) return;  // no pods in this mode (the standalone agent, by design)
  const auto now = clock_.MonotonicNow();
  while (!pod_lists_.empty() && now - pod_lists_.front() >= std::chrono::minutes(1)) {
    pod_lists_.pop_front();
  }
  if (pods_waiting_.empty() && pod_lists_.size() < options_.pod_events.node_lists_per_minute) {
    pod_lists_.push_back(now);
    if (auto pods = ListNodePods(node)) TellListedPods(node, reason, std::move(*pods));
    return;
  }
  if (pods_unlisted_ == 0) {
    pods_due_ = now + options_.pod_events.batch_delay;
    LogInfo("tainter", "many nodes taken out at once: their pods are listed together",
            {{"node_lists_per_minute", options_.pod_events.node_lists_per_minute},
             {"within_s", options_.pod_events.batch_delay.count()}});
  }
  // Bounded by the valve: at most its fleet limit of new taints wait.
  pods_waiting_.push_back({node, reason, false, {}});
  ++pods_unlisted_;
}

void Tainter::ListWaitingPods() {
  const auto unlisted = pods_waiting_.end() - static_cast<std::ptrdiff_t>(pods_unlisted_);
  const std::size_t n = pods_unlisted_;
  pods_unlisted_ = 0;
  if (n <= pods_shared_pages_) {
    // Fewer nodes than the shared listing has pages: a list per node is cheaper.
    for (auto w = unlisted; w != pods_waiting_.end(); ++w) {
      if (auto pods = ListNodePods(w->node)) w->pods = std::move(*pods);
      w->listed = true;  // a failed list: nobody to tell (counted)
    }
    return;
  }
  Result<PodListing> listing = api_.pods->ListPodsAt(kRunningPods);
  if (!listing) {
    m_.PodEvents("list_failed").Inc(n);
    LogWarning("tainter", "cannot list the cluster's pods to tell the taken-out nodes' pods",
               {{"nodes", n}, {"error", listing.error().ToString()}});
    pods_waiting_.erase(unlisted, pods_waiting_.end());
    return;
  }
  // What it cost, for the next choice (the client pages by kPodPageSize).
  pods_shared_pages_ =
      std::max<std::size_t>(1, (listing->pods.size() + kPodPageSize - 1) / kPodPageSize);
  std::map<std::string, std::vector<PodInfo>> by_node;
  for (auto w = unlisted; w != pods_waiting_.end(); ++w) by_node[w->node];
  for (PodInfo& pod : listing->pods) {
    if (auto it = by_node.find(pod.node_name); it != by_node.end()) {
      it->second.push_back(std::move(pod));
    }
  }
  for (auto w = unlisted; w != pods_waiting_.end(); ++w) {
    w->listed = true;
    w->pods = by_node[w->node];  // a copy: a node tainted twice while waiting is told twice
  }
}

void Tainter::TellWaitingPods() {
  if (pods_unlisted_ > 0 && clock_.MonotonicNow() >= pods_due_) ListWaitingPods();
  // The Events go out within the round's budget (the main loop returns to
  // Kafka's poll in time); the rest keep their pods for the next Tick.
  while (!pods_waiting_.empty() && pods_waiting_.front().listed &&
         !RoundOver(clock_.MonotonicNow())) {
    PodsWaiting w = std::move(pods_waiting_.front());
    pods_waiting_.pop_front();
    TellListedPods(w.node, w.reason, std::move(w.pods));
  }
}

void Tainter::TellListedPods(const std::string& node, const Reason& reason,
                             std::vector<PodInfo> pods) {
  auto count = [&](const char* outcome, std::size_t n = 1) { m_.PodEvents(outcome).Inc(n); };
  PodEventPlan plan = BuildPodEvents(node, reason, std::move(pods), options_.pod_events.max_pods);
  if (plan.over_bound > 0) {
    count("over_bound", plan.over_bound);
    LogWarning("tainter", "more pods on the node than pod_events.max_pods; not all were told",
               {{"node", node}, {"told", plan.events.size()}, {"left_out", plan.over_bound}});
  }
  for (std::size_t i = 0; i < plan.events.size(); ++i) {
    const NodeEvent& e = plan.events[i];
    Status s = RecordEvent(e);
    if (s.ok()) {
      count("recorded");
      continue;
    }
    count("failed");
    LogWarning("tainter", "cannot record a pod's Event",
               {{"node", node},
                {"pod", e.subject->namespace_name + "/" + e.subject->name},
                {"error", s.ToString()}});
    if (s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kUnauthenticated) {
      count("failed", plan.events.size() - i - 1);  // the API is away: the rest would fail too
      return;
    }
  }
}

}  // namespace faultline
