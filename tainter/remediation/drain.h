// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "tainter/kube/node_pods.h"

namespace faultline {

// What a drain does with one pod on the node (kubectl drain's filters, with
// --ignore-daemonsets and without --force or --delete-emptydir-data
// surprises: faultline never deletes a pod, it only asks the Eviction API).
enum class PodDrainClass : std::uint8_t {
  kEvict,          // evict it
  kSkipDaemonSet,  // its controller is a DaemonSet: it would come straight back (and
                   // tolerates unschedulable); the node's agents live here
  kSkipMirror,     // a static pod's mirror (kubernetes.io/config.mirror): the API
                   // cannot remove it, the kubelet owns it
  kSkipFinished,   // Succeeded or Failed: holds no resources
  kLeaving,        // already being deleted: wait for it, do not evict it again
};
PodDrainClass ClassifyForDrain(const PodInfo& pod);
std::string_view PodDrainClassName(PodDrainClass c);

// One node's drain in progress: per pod, when it may be asked again after
// its PodDisruptionBudget said no (429). The delay doubles per refusal from
// `first` up to `cap` (kubectl drain retries every 5 s; a budget that stays
// shut for long should not cost a request every few seconds per pod).
class DrainProgress {
 public:
  DrainProgress(std::chrono::milliseconds first, std::chrono::milliseconds cap)
      : first_(first), cap_(cap) {}
  bool Due(const std::string& pod, std::chrono::steady_clock::time_point now) const;
  // A refusal (429) or a failed call: the pod waits.
  void Refused(const std::string& pod, std::chrono::steady_clock::time_point now);
  void Forget(const std::string& pod) { pods_.erase(pod); }
  int refusals(const std::string& pod) const;

 private:
  struct Retry {
    int refusals = 0;
    std::chrono::steady_clock::time_point next{};
  };
  std::chrono::milliseconds first_;
  std::chrono::milliseconds cap_;
  std::map<std::string, Retry> pods_;  // "ns/name"
};

}  // namespace faultline
