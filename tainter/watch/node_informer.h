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

// The nodes, as the tainter's Informer (tainter/watch/informer.h) keeps them: the
// selector is the tainter's node label selector (empty: every node).
struct NodeKind {
  using Object = NodeInfo;
  using Listing = NodeListing;
  using Event = NodeWatchEvent;
  using Api = NodeWatchApi;
  static constexpr std::string_view kName = "node";
  static constexpr const char* kDefaultSelector = "";
  static Result<Listing> List(NodeWatchApi& api, std::string_view selector) {
    return api.ListNodesAt(selector);
  }
  static Status Watch(NodeWatchApi& api, std::string_view selector, std::string_view version,
                      std::chrono::seconds timeout,
                      const std::function<bool(const Event&)>& on_event,
                      const std::atomic<bool>* stop) {
    return api.WatchNodes(selector, version, timeout, on_event, stop);
  }
  static std::vector<Object>& Objects(Listing& listing) { return listing.nodes; }
  static const Object& ObjectOf(const Event& event) { return event.node; }
};

// Keeps the tainter's picture of the nodes current (list + watch), so a
// by-hand untaint or another replica's write reaches Tainter::Observe.
// Metrics: faultline_tainter_node_watch_restarts_total{why}.
using NodeInformer = Informer<NodeKind>;

}  // namespace faultline
