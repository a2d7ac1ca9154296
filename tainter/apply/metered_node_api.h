// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "tainter/apply/applier_apis.h"
#include "tainter/apply/tainter_metrics.h"
#include "tainter/kube/node_api.h"

namespace faultline {

// The applier's API capabilities (ApplierApis), each call metered as it is
// passed on to the inner ones: its latency (faultline_tainter_api_seconds{op}),
// its errors (faultline_tainter_api_errors_total{op,code}) and whether the
// API server was reachable at the last call (kUnavailable, kUnauthenticated
// and kDeadlineExceeded say it was not). The applier makes every call
// through one, so no call site measures. It has the capabilities its inner
// ApplierApis has (apis()).
//
// Not metered, because they are answers the caller expects rather than
// failures: kAborted or kAlreadyExists from PutValveRecord (another replica
// wrote the record first: read it again). The watches are not here (the
// informers run their own clients).
//
// Thread-safety: as the inner ones. `inner`'s objects, `metrics` and
// `clock` must outlive it.
class MeteredNodeApi final : public NodeApi, public PodApi, public EventApi, public ValveRecordApi {
 public:
  MeteredNodeApi(ApplierApis inner, TainterMetrics& metrics, const Clock& clock)
      : inner_(inner), metrics_(metrics), clock_(clock) {}

  // The metered capabilities: those `inner` has, through this object.
  ApplierApis apis() {
    return ApplierApis{*this, *this, inner_.pods != nullptr ? this : nullptr,
                       inner_.valve != nullptr ? this : nullptr};
  }

  Result<NodeInfo> GetNode(std::string_view name) override;
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  Status CreateEvent(const NodeEvent& event) override;
  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override;
  // PodApi and ValveRecordApi: only through apis(), which offers them when
  // `inner` has them.
  Result<PodListing> ListPodsAt(std::string_view field_selector) override;
  Status WatchPods(std::string_view field_selector, std::string_view resource_version,
                   std::chrono::seconds timeout,
                   const std::function<bool(const PodWatchEvent&)>& on_event,
                   const std::atomic<bool>* stop) override {
    if (inner_.pods == nullptr) return InternalError("no PodApi behind the metered API (a bug)");
    return inner_.pods->WatchPods(field_selector, resource_version, timeout, on_event, stop);
  }
  Result<SharedRecord> GetValveRecord() override;
  Status PutValveRecord(const std::string& value, const std::string& expected_version) override;

  // false after a call that found the API server unreachable.
  bool reachable() const { return reachable_; }

 private:
  // Records one call of `op` that began at `start` and ended with `s`.
  void Meter(std::string_view op, const Status& s, std::chrono::steady_clock::time_point start);

  ApplierApis inner_;
  TainterMetrics& metrics_;
  const Clock& clock_;
  bool reachable_ = true;
};

}  // namespace faultline
