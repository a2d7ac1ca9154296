// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "tainter/kube/kube_node_json.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The NodeApi of `faultline-agent --standalone --dry-run` (and of standalone
// without Kubernetes credentials): nothing is sent; each write is printed on
// `out` as the request the real client would send, and applied to an
// in-memory copy of the node, so later patches show the cumulative state.
//
//   UpdateNode   prints "PATCH /api/v1/nodes/NAME" and the exact JSON Patch
//                (tainter/kube_node_json.h BuildNodePatch against the copy);
//                a change already in effect prints nothing, as the real
//                client sends nothing.
//   CreateEvent  prints "POST /api/v1/namespaces/NS/events", the Event's
//                type, reason and message, and its JSON (BuildEventJson).
//   GetNode      the copy. It starts as the node read once through `reader`
//                when one is given (credentials exist but writes are off; if
//                that read fails, a warning and the synthetic node below),
//                else as {name, resourceVersion "0", no taints}.
//   ListNodes    the copy (one node; the selector is not applied).
// Any other node name is kNotFound.
//
// Thread-safety: one thread at a time; patches()/events() may be read from
// any thread. `out`, `clock` and `reader` must outlive it.
class DryRunNodeApi final : public NodeApi {
 public:
  DryRunNodeApi(std::string node, std::ostream& out, const Clock& clock, NodeApi* reader = nullptr,
                EventOptions events = {});

  Result<NodeInfo> GetNode(std::string_view name) override;
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  Status CreateEvent(const NodeEvent& event) override;

  int patches() const { return patches_.load(); }
  int events() const { return events_.load(); }

 private:
  Status Load(std::string_view name);

  NodeInfo node_;
  bool loaded_ = false;
  std::ostream& out_;
  const Clock& clock_;
  NodeApi* reader_;
  const EventOptions event_options_;
  std::atomic<int> patches_{0};
  std::atomic<int> events_{0};
};

// core/v1 Node JSON of `node` as an API server returns it (metadata.name,
// uid, resourceVersion, labels and annotations when non-empty, spec.taints
// when non-empty), the input BuildNodePatch expects.
nlohmann::json NodeInfoToJson(const NodeInfo& node);

}  // namespace faultline
