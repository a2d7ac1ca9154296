// SPDX-License-Identifier: Apache-2.0
#include "tainter/remediation/drain.h"

#include <algorithm>

namespace faultline {

PodDrainClass ClassifyForDrain(const PodInfo& pod) {
  if (pod.mirror) return PodDrainClass::kSkipMirror;
  if (pod.owner_kind == "DaemonSet") return PodDrainClass::kSkipDaemonSet;
  if (pod.phase == "Succeeded" || pod.phase == "Failed") return PodDrainClass::kSkipFinished;
  if (pod.deleting) return PodDrainClass::kLeaving;
  return PodDrainClass::kEvict;
}

std::string_view PodDrainClassName(PodDrainClass c) {
  switch (c) {
    case PodDrainClass::kEvict:
      return "evict";
    case PodDrainClass::kSkipDaemonSet:
      return "daemonset";
    case PodDrainClass::kSkipMirror:
      return "mirror";
    case PodDrainClass::kSkipFinished:
      return "finished";
    case PodDrainClass::kLeaving:
      return "leaving";
  }
  return "?";
}

bool DrainProgress::Due(const std::string& pod, std::chrono::steady_clock::time_point now) const {
  auto it = pods_.find(pod);
  return it == pods_.end() || now >= it->second.next;
}

void DrainProgress::Refused(const std::string& pod, std::chrono::steady_clock::time_point now) {
  Retry& r = pods_[pod];
  const int shift = std::min(r.refusals, 16);
  ++r.refusals;
  r.next = now + std::min<std::chrono::milliseconds>(first_ * (1LL << shift), cap_);
}

int DrainProgress::refusals(const std::string& pod) const {
  auto it = pods_.find(pod);
  return it == pods_.end() ? 0 : it->second.refusals;
}

}  // namespace faultline
