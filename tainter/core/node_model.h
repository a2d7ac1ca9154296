// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline {

// The Kubernetes objects as faultline's decisions see them: plain values,
// no client. The decision core (tainter/core/) reads and writes these; the
// client (tainter/kube/) converts them to and from the API's JSON.

// A core/v1 Taint.
struct NodeTaint {
  std::string key;
  std::string value;
  std::string effect = "NoSchedule";  // NoSchedule | PreferNoSchedule | NoExecute
  std::string time_added;             // RFC 3339, may be empty

  // Kubernetes identifies a taint by key and effect.
  bool SameAs(const NodeTaint& other) const { return key == other.key && effect == other.effect; }
};

// "key=value:effect" (kubectl's form; "key:effect" without a value).
std::string TaintText(const NodeTaint& taint);

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

// The node as a caller last saw it without reading it (the daemon's node
// watch), reduced to what a write of faultline's own keys is built from: a
// JSON patch addresses the taints by index and adds to the label and
// annotation maps key by key, or adds a whole map where the node has none.
// `node.labels` and `node.annotations` may hold only the keys the change
// names; has_labels / has_annotations say whether the node has the map at
// all (a patch must never replace a map it was not shown).
struct NodeBase {
  NodeInfo node;
  bool has_labels = false;
  bool has_annotations = false;
};

// One change to one node, applied in a single optimistic write.
struct NodeChange {
  std::optional<NodeTaint> add_taint;     // added unless a taint with its key+effect exists
  std::optional<NodeTaint> remove_taint;  // removed if a taint with its key+effect exists
  // Annotation key -> new value; nullopt removes the annotation.
  std::map<std::string, std::optional<std::string>> annotations;
  // Label key -> new value; nullopt removes the label. faultline writes one
  // label only, kNeedsInspectionLabel (tainter/core/recovery.h).
  std::map<std::string, std::optional<std::string>> labels;
  // Non-empty: the change was computed from this version of the node (a
  // read-merge-write). If the node has moved since, UpdateNode returns
  // kAborted at once instead of re-applying the change to the newer node,
  // so the caller re-reads and merges again.
  std::string expected_resource_version;
  // Non-null, at expected_resource_version: the write is built from this
  // picture instead of a read of the node (KubeNodeApi: no GET before the
  // PATCH). The patch's test of the resourceVersion still refuses a node
  // that moved since; that conflict returns kAborted at once, without a
  // read, and the caller reads and merges again. Only for the call.
  const NodeBase* base = nullptr;
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

// What a list or a watch saw change among the objects it keeps, in order
// (the informers of tainter/watch/ produce them; the applier and the
// correlation take them without knowing the informer).
template <typename Object>
struct WatchChange {
  enum class Kind : std::uint8_t {
    kList,     // `objects` is the complete set (after a list or a re-list)
    kUpsert,   // objects[0] was added or modified
    kDeleted,  // objects[0] was deleted (or stopped matching the selector)
  };
  Kind kind = Kind::kUpsert;
  std::vector<Object> objects;
};
using NodeWatchChange = WatchChange<NodeInfo>;
using PodWatchChange = WatchChange<PodInfo>;

// Kubernetes metav1.Time: RFC 3339 in UTC with whole seconds.
std::string KubeTime(std::chrono::system_clock::time_point t);

}  // namespace faultline
