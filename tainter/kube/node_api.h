// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tainter/core/node_model.h"

namespace faultline {

// The Kubernetes operations faultline performs, one interface per
// capability, so that each user takes only what it calls and each mode of
// the program says which capabilities it has: the stack that assembles a
// daemon (TainterStack, tainter/daemon/tainter_stack.h; the standalone
// agent, collector/standalone/) passes a capability it lacks as nothing (a
// null pointer), never as an implementation that fails.
//
//   NodeApi         read and write Nodes and their conditions
//   NodeWatchApi    list Nodes with a resourceVersion and watch them
//   PodApi          list and watch Pods
//   EventApi        record Events
//   ValveRecordApi  the safety valve's record shared by every replica
//
// KubeNodeApi (tainter/kube/kube_node_api.h) speaks HTTPS to the API server
// and has them all; policy code is tested against in-memory fakes
// (tests/fakes/fake_node_api.h).
//
// Every call is bounded in time. Errors tell the caller what to do:
//   kNotFound          the node is gone: forget it
//   kPermissionDenied  RBAC refused (403): a deployment error, alert; retrying will not help
//   kUnauthenticated   the token was refused (401)
//   kAborted           still conflicting after the implementation's own re-read/retry loop
//   kUnavailable       unreachable, 429 or 5xx after retries with backoff: try again later
//   kInvalidArgument   the server rejected the request as malformed (a bug)
//
// Thread-safety: implementations may be used from one thread at a time.
class NodeApi {
 public:
  virtual ~NodeApi() = default;

  virtual Result<NodeInfo> GetNode(std::string_view name) = 0;

  // `label_selector` as Kubernetes writes it ("gpu=true,!faultline.dev/opt-out"); may be empty.
  virtual Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) = 0;

  // Applies `change` with an optimistic write: read the node, send a JSON Patch
  // whose first operation tests metadata.resourceVersion, and on a conflict
  // (409, or 422 from a failed test) re-read and retry. Taints and annotations
  // not named in `change` are never touched, so other controllers' concurrent
  // changes survive. A change that is already in effect succeeds without a write.
  virtual Status UpdateNode(std::string_view name, const NodeChange& change) = 0;

  // Sets `conditions` on the node's status subresource, merged by type: a
  // condition of another type (the kubelet's Ready, NPD's KernelDeadlock)
  // is never touched, whoever wrote it and whenever. KubeNodeApi: PATCH
  // /api/v1/nodes/{name}/status, application/strategic-merge-patch+json.
  virtual Status PatchNodeConditions(std::string_view name,
                                     const std::vector<NodeCondition>& conditions) = 0;
};

// The node informer's calls (tainter/watch/node_informer.h): only the
// daemon watches nodes; the standalone agent reads its one node.
class NodeWatchApi {
 public:
  virtual ~NodeWatchApi() = default;

  // The nodes matching `label_selector` with the list's resourceVersion.
  virtual Result<NodeListing> ListNodesAt(std::string_view label_selector) = 0;

  // Watches the nodes matching `label_selector` from `resource_version`
  // (the client-go informer convention: list, then watch from the list's
  // version). Calls `on_event` for every change, in order, until the
  // server ends the stream after `timeout` (OkStatus: watch again from the
  // last version seen), `on_event` returns false, or `stop` is set.
  // kOutOfRange: 410 Gone, the version is too old (re-list).
  virtual Status WatchNodes(std::string_view label_selector, std::string_view resource_version,
                            std::chrono::seconds timeout,
                            const std::function<bool(const NodeWatchEvent&)>& on_event,
                            const std::atomic<bool>* stop) = 0;
};

// Pods of every namespace matching `field_selector` ("status.podIP!=":
// those that have an IP), with the list's resourceVersion; and the watch
// from it, with NodeWatchApi::WatchNodes's contract. Used for the pod
// Events of a taint, drain's pod list and fleet correlation's pod index;
// without it they go without pods.
class PodApi {
 public:
  virtual ~PodApi() = default;

  virtual Result<PodListing> ListPodsAt(std::string_view field_selector) = 0;
  virtual Status WatchPods(std::string_view field_selector, std::string_view resource_version,
                           std::chrono::seconds timeout,
                           const std::function<bool(const PodWatchEvent&)>& on_event,
                           const std::atomic<bool>* stop) = 0;
};

// Records Events (on a node, or on the object `event.subject` names).
class EventApi {
 public:
  virtual ~EventApi() = default;

  virtual Status CreateEvent(const NodeEvent& event) = 0;
};

// The safety valve's record shared by every replica (KubeNodeApi: a
// coordination.k8s.io Lease). Without one the valve counts in memory, for
// one process (the standalone agent, a dry run).
class ValveRecordApi {
 public:
  virtual ~ValveRecordApi() = default;

  virtual Result<SharedRecord> GetValveRecord() = 0;
  // Writes `value` if the record is still at `expected_version` (empty:
  // creates it). kAborted: someone wrote it since (read again).
  virtual Status PutValveRecord(const std::string& value, const std::string& expected_version) = 0;
};

}  // namespace faultline
