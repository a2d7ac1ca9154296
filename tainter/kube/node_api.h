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

namespace faultline {

// A core/v1 Taint.
struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";  // NoSchedule | PreferNoSchedule | NoExecute
  std::string time_added;             // RFC 3339, may be empty

  // Kubernetes identifies a taint by key and effect.
  bool SameAs(const NodeTaint& other) const { return key == other.key && effect == other.effect; }
};

// A core/v1 NodeCondition (status.conditions[]). Kubernetes merges the list
// by `type` under a strategic merge patch (patchMergeKey "type").
struct NodeCondition {
  std::string type;    // CamelCase: "GPUFault"
  std::string status;  // "True" | "False" | "Unknown" (a string, as the API has it)
  std::string reason;  // CamelCase, machine-readable
  std::string message;
  std::string last_heartbeat_time;   // RFC 3339; may be empty
  std::string last_transition_time;  // RFC 3339; may be empty

  friend bool operator==(const NodeCondition&, const NodeCondition&) = default;
};

// What the tainter needs to know of a Node.
struct NodeInfo {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<NodeTaint> taints;
  std::vector<std::string> addresses;     // status.addresses[].address
  std::vector<NodeCondition> conditions;  // status.conditions, every writer's
  std::string boot_id;                    // status.nodeInfo.bootID; may be empty
};

// One change to one node, applied in a single optimistic write.
struct NodeChange {
  std::optional<NodeTaint> add_taint;     // added unless a taint with its key+effect exists
  std::optional<NodeTaint> remove_taint;  // removed if a taint with its key+effect exists
  // Annotation key -> new value; nullopt removes the annotation.
  std::map<std::string, std::optional<std::string>> annotations;
  // Non-empty: the change was computed from this version of the node (a
  // read-merge-write). If the node has moved since, UpdateNode returns
  // kAborted at once instead of re-applying the change to the newer node,
  // so the caller re-reads and merges again.
  std::string expected_resource_version;
};

// The object an Event is about when it is not the Node: a Pod on the node
// (`kubectl describe pod`) or a job's controller (PyTorchJob, Job ...).
// Namespaced: the Event is created in `namespace_name`, since the API server
// requires an Event's metadata.namespace to equal involvedObject.namespace
// (ValidateEvent; 422 otherwise).
struct EventSubject {
  std::string api_version;  // "v1", "kubeflow.org/v1"
  std::string kind;         // "Pod", "PyTorchJob"
  std::string namespace_name;
  std::string name;
  std::string uid;  // may be empty
};

// A core/v1 Event about a Node ("kubectl describe node" shows it), or, with
// `subject`, about a namespaced object because of that node.
struct NodeEvent {
  std::string node;
  std::string node_uid;
  std::optional<EventSubject> subject;  // empty: the Event is about the Node
  std::string type = "Warning";         // Warning | Normal
  std::string reason;   // CamelCase: "FaultlineTainted", "FaultlineFault", "FaultlineValveShut"
  std::string message;  // rule, summary and the log line; bounded by the implementation
  std::string component = "faultline";
};

// A list with the resourceVersion it was read at: where a watch starts.
struct NodeListing {
  std::vector<NodeInfo> nodes;
  std::string resource_version;
};

// One change seen by a watch.
struct NodeWatchEvent {
  enum class Type : std::uint8_t { kAdded, kModified, kDeleted, kBookmark };
  Type type = Type::kModified;
  NodeInfo node;  // kBookmark: only resource_version is set
};

// What faultline reads of a Pod: where it runs, its IPs and its controller
// (fleet correlation, tainter/correlation/pod_index.h; the pod Events), and
// its phase and whether it is a mirror or leaving (drain). Nothing else.
struct PodInfo {
  std::string namespace_name;
  std::string name;
  std::string uid;  // metadata.uid
  std::string resource_version;
  std::string node_name;         // spec.nodeName; empty until scheduled
  std::vector<std::string> ips;  // status.podIPs[].ip, else status.podIP
  bool host_network = false;     // spec.hostNetwork: its IP is the node's
  // The controller ownerReference (controller: true): "batch/v1" "Job"
  // "train-a", "kubeflow.org/v1" "PyTorchJob" "train-a"; empty when none.
  std::string owner_api_version;
  std::string owner_kind;
  std::string owner_name;
  std::string owner_uid;
  // What drain reads (tainter/remediation/drain.h):
  std::string phase;      // status.phase
  bool mirror = false;    // annotation kubernetes.io/config.mirror: a static pod's mirror
  bool deleting = false;  // metadata.deletionTimestamp is set
};

struct PodListing {
  std::vector<PodInfo> pods;
  std::string resource_version;
};

struct PodWatchEvent {
  enum class Type : std::uint8_t { kAdded, kModified, kDeleted, kBookmark };
  Type type = Type::kModified;
  PodInfo pod;  // kBookmark: only resource_version is set
};

// A small shared record the replicas update optimistically (the safety
// valve's recent new taints). `resource_version` empty: it does not exist yet.
struct SharedRecord {
  std::string value;
  std::string resource_version;
};

// The Kubernetes operations faultline performs, behind one interface so that
// policy code is tested against an in-memory fake (tests/fakes/fake_node_api.h)
// and KubeNodeApi (tainter/kube_node_api.h) speaks HTTPS to the API server.
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

  virtual Status CreateEvent(const NodeEvent& event) = 0;

  // Sets `conditions` on the node's status subresource, merged by type: a
  // condition of another type (the kubelet's Ready, NPD's KernelDeadlock)
  // is never touched, whoever wrote it and whenever. KubeNodeApi: PATCH
  // /api/v1/nodes/{name}/status, application/strategic-merge-patch+json.
  // kFailedPrecondition: this NodeApi cannot write conditions (the caller
  // goes on without them).
  virtual Status PatchNodeConditions(std::string_view /*name*/,
                                     const std::vector<NodeCondition>& /*conditions*/) {
    return FailedPreconditionError("this NodeApi does not write node conditions");
  }

  // ListNodes with the list's resourceVersion (empty when the
  // implementation has none: a watch must then start without one).
  virtual Result<NodeListing> ListNodesAt(std::string_view label_selector) {
    Result<std::vector<NodeInfo>> nodes = ListNodes(label_selector);
    if (!nodes) return nodes.error();
    return NodeListing{std::move(*nodes), {}};
  }

  // Watches the nodes matching `label_selector` from `resource_version`
  // (the client-go informer convention: list, then watch from the list's
  // version). Calls `on_event` for every change, in order, until the
  // server ends the stream after `timeout` (OkStatus: watch again from the
  // last version seen), `on_event` returns false, or `stop` is set.
  // kOutOfRange: 410 Gone, the version is too old (re-list);
  // kFailedPrecondition: this NodeApi cannot watch (the caller polls).
  virtual Status WatchNodes(std::string_view /*label_selector*/,
                            std::string_view /*resource_version*/, std::chrono::seconds /*timeout*/,
                            const std::function<bool(const NodeWatchEvent&)>& /*on_event*/,
                            const std::atomic<bool>* /*stop*/) {
    return FailedPreconditionError("this NodeApi cannot watch");
  }

  // Pods of every namespace matching `field_selector` ("status.podIP!=":
  // those that have an IP), with the list's resourceVersion; and the watch
  // from it, with WatchNodes's contract. kFailedPrecondition: this NodeApi
  // cannot (fleet correlation goes on without pod IPs and owners).
  virtual Result<PodListing> ListPodsAt(std::string_view /*field_selector*/) {
    return FailedPreconditionError("this NodeApi cannot list pods");
  }
  virtual Status WatchPods(std::string_view /*field_selector*/,
                           std::string_view /*resource_version*/, std::chrono::seconds /*timeout*/,
                           const std::function<bool(const PodWatchEvent&)>& /*on_event*/,
                           const std::atomic<bool>* /*stop*/) {
    return FailedPreconditionError("this NodeApi cannot watch pods");
  }

  // The safety valve's record shared by every replica (KubeNodeApi: a
  // coordination.k8s.io Lease). kFailedPrecondition: this NodeApi has none
  // (the valve then counts in memory, for one process).
  virtual Result<SharedRecord> GetValveRecord() {
    return FailedPreconditionError("no shared valve record");
  }
  // Writes `value` if the record is still at `expected_version` (empty:
  // creates it). kAborted: someone wrote it since (read again).
  virtual Status PutValveRecord(const std::string& /*value*/,
                                const std::string& /*expected_version*/) {
    return FailedPreconditionError("no shared valve record");
  }
};

}  // namespace faultline
