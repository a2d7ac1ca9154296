// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string_view>
#include <vector>

#include "tainter/kube/node_api.h"
#include "tainter/watch/informer.h"

namespace faultline {

// The pods fleet correlation needs (tainter/correlation/pod_index.h), as an
// Informer (tainter/watch/informer.h) keeps them: every namespace's pods that have
// an IP (field selector `status.podIP!=`, which kube-apiserver supports for
// pods). A pod that loses its IP or is deleted comes as kDeleted. Only
// PodInfo (node, IPs, controller) is kept of each Pod; the bound on how many
// is the PodIndex's.
struct PodKind {
  using Object = PodInfo;
  using Listing = PodListing;
  using Event = PodWatchEvent;
  using Api = PodApi;
  static constexpr std::string_view kName = "pod";
  static constexpr const char* kDefaultSelector = "status.podIP!=";
  static Result<Listing> List(PodApi& api, std::string_view selector) {
    return api.ListPodsAt(selector);
  }
  static Status Watch(PodApi& api, std::string_view selector, std::string_view version,
                      std::chrono::seconds timeout,
                      const std::function<bool(const Event&)>& on_event,
                      const std::atomic<bool>* stop) {
    return api.WatchPods(selector, version, timeout, on_event, stop);
  }
  static std::vector<Object>& Objects(Listing& listing) { return listing.pods; }
  static const Object& ObjectOf(const Event& event) { return event.pod; }
};

// Metrics: faultline_tainter_pod_watch_restarts_total{why}.
using PodInformer = Informer<PodKind>;

}  // namespace faultline
