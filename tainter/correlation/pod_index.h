// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tainter/core/node_model.h"

namespace faultline {

// A pod's controller (its ownerReference with controller: true): the job an
// incident belongs to. Kubeflow's PyTorchJob and MPIJob own their pods
// directly; a JobSet's pods are owned by its child Job.
struct JobOwner {
  std::string api_version;  // "kubeflow.org/v1", "batch/v1"
  std::string kind;         // "PyTorchJob", "Job"
  std::string name;
  std::string uid;  // may be empty (a pod indexed before uids were kept)
};

// What fleet correlation keeps of the cluster's pods, from the pod watch
// (tainter/watch/pod_informer.h): pod IP -> node (a peer named by its pod IP
// resolves to the node it runs on) and namespace/pod -> controller (the
// incident's job). Nothing else of a Pod is kept, and at most `max_pods`
// pods: past that, new pods are not indexed (counted in dropped()), so a
// cluster of a million pods cannot grow the tainter without bound.
//
// A pod IP re-used by a new pod belongs to the newest holder; removing the
// old pod does not take it away. Host-network pods' IPs are the node's own
// (the node watch has them) and shared by many pods: not indexed.
//
// Thread-safety: none; one thread owns it.
class PodIndex {
 public:
  struct Options {
    std::size_t max_pods = 200'000;
  };

  PodIndex() : PodIndex(Options{}) {}
  explicit PodIndex(Options options) : options_(options) {}

  void Replace(const std::vector<PodInfo>& pods);  // a (re-)list: the complete set
  void Upsert(const PodInfo& pod);
  void Remove(const std::string& ns, const std::string& name);

  // The node of the pod at `address` (any form CanonicalAddress reads).
  std::optional<std::string> NodeOf(std::string_view address) const;
  // The controller of namespace/pod; nullopt when unknown or it has none.
  std::optional<JobOwner> OwnerOf(const std::string& ns, const std::string& pod) const;

  std::size_t size() const { return pods_.size(); }
  std::size_t addresses() const { return ip_pod_.size(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  struct Entry {
    std::string node;
    std::vector<std::string> ips;  // canonical
    JobOwner owner;
  };
  void Erase(const std::string& key);

  Options options_;
  std::unordered_map<std::string, Entry> pods_;          // "ns/name"
  std::unordered_map<std::string, std::string> ip_pod_;  // canonical IP -> "ns/name"
  std::uint64_t dropped_ = 0;
};

}  // namespace faultline
