// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/status.h"
#include "tainter/apply/tainter_metrics.h"
#include "tainter/kube/kube_node_json.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The one dry-run API, for both daemons (nodes, Events, and the pods read
// through `pods`): nothing is written; each write
// is reported as the request the real client would send and applied to an
// in-memory copy of the node, so later patches (and re-reads) show the
// cumulative state.
//
//   UpdateNode   reports "PATCH /api/v1/nodes/NAME" and the exact JSON Patch
//                (tainter/kube/kube_node_json.h BuildNodePatch against the
//                copy); a change already in effect reports nothing, as the
//                real client sends nothing.
//   PatchNodeConditions
//                reports "PATCH /api/v1/nodes/NAME/status" and the
//                strategic merge patch (BuildConditionsPatch), and merges
//                the conditions into the copy by type.
//   CreateEvent  reports "POST /api/v1/namespaces/NS/events", the Event's
//                type, reason and message, and its JSON (BuildEventJson).
//   GetNode      the copy. It starts as the node read through `reader`
//                (reading is allowed in a dry run). Without a reader, or for
//                `only_node` when that read fails (a warning), the copy
//                starts as {name, resourceVersion "0", no taints}.
//   ListNodes    with `only_node`: that copy (the selector is not applied);
//                else the reader's list with the copies in place of the
//                nodes written to.
// With `only_node` set, any other node name is kNotFound.
//
// Reporting: `out` (faultline-agent --standalone: readable text on stdout)
// and/or, with `metrics`, a log line ("dry-run: would update node", "dry-run:
// would patch node conditions", "dry-run: would record event") and
// faultline_tainter_dry_run_writes_total{op: update, conditions, event}
// (faultline-tainter --dry-run).
//
//   ListPodsAt   a read: through `pods` (the pods a pod Event would be
//                about); offer it as a PodApi only when `pods` is set.
//
// Thread-safety: one thread at a time; patches()/events() may be read from
// any thread. `out`, `metrics`, `clock`, `reader` and `pods` must outlive it.
class DryRunNodeApi final : public NodeApi, public PodApi, public EventApi {
 public:
  struct Options {
    std::ostream* out = nullptr;
    TainterMetrics* metrics = nullptr;
    std::string only_node;  // empty: any node the reader knows
    EventOptions events;
  };
  DryRunNodeApi(Options options, const Clock& clock, NodeApi* reader, PodApi* pods = nullptr);
  // The standalone agent's form: one node, printed on `out`.
  DryRunNodeApi(std::string node, std::ostream& out, const Clock& clock, NodeApi* reader = nullptr,
                EventOptions events = {});

  Result<NodeInfo> GetNode(std::string_view name) override;
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  Status CreateEvent(const NodeEvent& event) override;
  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override;
  // Reads, through `pods` (only offered as a PodApi when it is set).
  Result<PodListing> ListPodsAt(std::string_view field_selector) override {
    if (pods_ == nullptr) return InternalError("dry-run API used as a PodApi without one (a bug)");
    return pods_->ListPodsAt(field_selector);
  }
  Status WatchPods(std::string_view field_selector, std::string_view resource_version,
                   std::chrono::seconds timeout,
                   const std::function<bool(const PodWatchEvent&)>& on_event,
                   const std::atomic<bool>* stop) override {
    if (pods_ == nullptr) return InternalError("dry-run API used as a PodApi without one (a bug)");
    return pods_->WatchPods(field_selector, resource_version, timeout, on_event, stop);
  }

  int patches() const { return patches_.load(); }
  int events() const { return events_.load(); }
  int condition_patches() const { return condition_patches_.load(); }

 private:
  // The copy of `name`, read through the reader on first use.
  Result<NodeInfo*> Load(std::string_view name);

  Options options_;
  std::map<std::string, NodeInfo, std::less<>> nodes_;  // the copies
  const Clock& clock_;
  NodeApi* reader_;
  PodApi* pods_;
  std::atomic<int> patches_{0};
  std::atomic<int> events_{0};
  std::atomic<int> condition_patches_{0};
};

// core/v1 Node JSON of `node` as an API server returns it (metadata.name,
// uid, resourceVersion, labels and annotations when non-empty, spec.taints
// when non-empty), the input BuildNodePatch expects.
nlohmann::json NodeInfoToJson(const NodeInfo& node);

}  // namespace faultline
