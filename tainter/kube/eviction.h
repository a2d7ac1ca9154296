// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tainter/kube/kube_http.h"
#include "tainter/kube/node_pods.h"

namespace faultline {

// What cordon and drain read of a node: spec.unschedulable and the
// annotations, at one resourceVersion.
struct NodeScheduling {
  std::string resource_version;
  bool unschedulable = false;
  std::map<std::string, std::string> annotations;
};

// One merge patch to a node: spec.unschedulable and annotations together,
// so "cordoned" and "faultline cordoned it" land in one write.
struct SchedulingChange {
  std::string expected_resource_version;  // the version read: a move since -> kAborted
  std::optional<bool> unschedulable;      // nullopt: untouched; false: removed (uncordon)
  std::map<std::string, std::optional<std::string>> annotations;  // nullopt removes
};

enum class EvictionOutcome : std::uint8_t {
  kEvicted,          // 201: the pod is deleted after its grace period
  kBlockedByBudget,  // 429: a PodDisruptionBudget forbids it now; retry later
  kGone,             // 404: the pod no longer exists
};

// The calls remediation (tainter/remediation/remediation.h) makes besides NodeApi's.
// Errors follow node_api.h.
class EvictionApi {
 public:
  virtual ~EvictionApi() = default;
  virtual Result<NodeScheduling> GetScheduling(std::string_view node) = 0;
  virtual Status PatchScheduling(std::string_view node, const SchedulingChange& change) = 0;
  virtual Result<std::vector<PodInfo>> ListPodsOnNode(std::string_view node) = 0;
  // `grace`: deleteOptions.gracePeriodSeconds; nullopt: the pod's own.
  virtual Result<EvictionOutcome> Evict(std::string_view ns, std::string_view pod,
                                        std::optional<std::chrono::seconds> grace) = 0;
};

// EvictionApi over HTTPS. Give it a client made with
// KubeHttpClient::Options::return_too_many_requests: a PDB's 429 must come
// back here, not be retried inside Send() for up to its call deadline.
//
//   GetScheduling    GET   /api/v1/nodes/{name}
//   PatchScheduling  PATCH /api/v1/nodes/{name}, application/merge-patch+json:
//                    {"metadata":{"resourceVersion":RV,"annotations":{..}},
//                     "spec":{"unschedulable":true|null}}. A merge patch that
//                    carries metadata.resourceVersion is refused with 409 when
//                    the node has moved (kAborted); keys it does not name
//                    (other annotations, taints) are untouched.
//   ListPodsOnNode   GET   /api/v1/pods?fieldSelector=spec.nodeName=NODE,status.phase!=
//                    Succeeded,status.phase!=Failed: the pod listing of node_pods.h
//   Evict            POST  /api/v1/namespaces/{ns}/pods/{name}/eviction, a
//                    policy/v1 Eviction: 201 evicted, 429 blocked by a budget,
//                    404 gone; 429 without the budget cause (API priority and
//                    fairness) and 5xx are kUnavailable.
class KubeEvictionApi final : public EvictionApi {
 public:
  explicit KubeEvictionApi(std::unique_ptr<KubeHttpClient> http) : http_(std::move(http)) {}
  // A client of its own (return_too_many_requests set). kInvalidArgument: bad server URL.
  static Result<std::unique_ptr<KubeEvictionApi>> Create(KubeConfig config,
                                                         KubeHttpClient::Options options,
                                                         const Clock& clock,
                                                         MetricsRegistry& metrics);
  Result<NodeScheduling> GetScheduling(std::string_view node) override;
  Status PatchScheduling(std::string_view node, const SchedulingChange& change) override;
  Result<std::vector<PodInfo>> ListPodsOnNode(std::string_view node) override;
  Result<EvictionOutcome> Evict(std::string_view ns, std::string_view pod,
                                std::optional<std::chrono::seconds> grace) override;

 private:
  static constexpr std::size_t kPodPageSize = 500;  // kubectl drain's chunk size

  std::unique_ptr<KubeHttpClient> http_;
};

}  // namespace faultline
