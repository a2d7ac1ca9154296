// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "tainter/core/node_model.h"
#include "tainter/correlation/incidents.h"

namespace faultline {

inline constexpr std::string_view kIncidentEventReason = "FaultlineIncident";

// What the incident's Event says, for the job's owner:
//   "NCCL watchdog storm on 64 nodes at 2026-11-22T07:02:53Z: no hardware
//    evidence on any of its nodes"
//   "NCCL errors on 64 nodes at ...: attributed to node gpu-17 (gpu-17 ib.port-down: ...)"
// Bounded by the Event's own limit (BuildEventJson).
std::string IncidentMessage(const Incident& incident);

// The Warning Event on the job's owner (involvedObject: the pods' controller
// ownerReference, kind/apiVersion/name/uid, in the job's namespace), one per
// incident, attributed or not; nullopt when the owner is unknown (no pod
// watch, or the pods have no controller): there is no object to put it on.
std::optional<NodeEvent> IncidentOwnerEvent(const Incident& incident);

}  // namespace faultline
