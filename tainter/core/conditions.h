// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/fault_event.h"
#include "tainter/core/node_model.h"
#include "tainter/core/reasons.h"
#include "tainter/core/recovery.h"

namespace faultline {

// Node conditions: faultline's faults as NodeConditions on nodes/status, the
// interface remediation tools read (draino, medik8s NodeHealthCheck, Cluster
// API MachineHealthCheck; tainter/README.md "Node conditions").
//
// One condition type per fault domain. NPD's convention: status "True"
// means the problem is present, "False" that it is gone.
inline constexpr std::string_view kGpuFaultCondition = "GPUFault";
inline constexpr std::string_view kGpuInterconnectFaultCondition = "GPUInterconnectFault";
inline constexpr std::string_view kNetworkFaultCondition = "NetworkFault";
inline constexpr std::string_view kHostFaultCondition = "HostFault";
inline constexpr std::array<std::string_view, 4> kFaultConditionTypes = {
    kGpuFaultCondition, kGpuInterconnectFaultCondition, kNetworkFaultCondition,
    kHostFaultCondition};

// The reason a condition carries once faultline has no active fault of its type.
inline constexpr std::string_view kConditionLiftedReason = "FaultlineLifted";

// The condition type a rule's category stands for, or "" for none:
//   hardware, driver-firmware, sympathetic -> GPUFault (the GPU packs; the
//     host pack says `condition: HostFault` for its PCIe rules)
//   network                                -> NetworkFault
//   memory, storage, system                -> HostFault
//   application, informational, other      -> ""  (the taint only)
std::string ConditionTypeForCategory(std::string_view category);

// The event's own `condition` (the rule's `condition:` key) if set, else
// ConditionTypeForCategory(event.category).
std::string ConditionTypeFor(const FaultEvent& event);

// A CamelCase condition reason from a rule id, as the API conventions want
// reasons: "nvidia.xid" -> "NvidiaXid", "host.pcie-aer-fatal" ->
// "HostPcieAerFatal". At most 128 characters.
std::string ConditionReason(std::string_view rule);

// The condition writes that make the node show `active` (faultline's active
// reasons for it), given the node's `live` conditions as read:
//  - every type named by an active reason: status "True", reason and
//    message from its earliest reason (by first_seen; "+N more" when several
//    reasons share the type);
//  - every `owned` type no active reason names that is "True" on the node:
//    status "False", reason FaultlineLifted. An owned type absent from the
//    node stays absent (no write for a fault that never was).
// A condition whose status, reason and message already are on the node is
// left out: no write when nothing changed (no heartbeat-only writes).
// lastTransitionTime is `now` when the status changes (or the type is new),
// else the live one, so "True for 10m" in a health check counts from the
// fault. lastHeartbeatTime is `now` on every write. Types outside `owned`
// and not named by an active reason are never written.
//
// `waits` (Policy::Waits, by rule) puts the return-to-service state in the
// reason: a type with a reason in one of those states says the gravest,
// NeedsInspection > ValidationFailed > AwaitingValidation, and its message
// ends "; waits for: <what>". Otherwise the reason is the rule's. Either way
// the status stays True, so lastTransitionTime stays put.
std::vector<NodeCondition> ConditionUpdates(const std::vector<NodeCondition>& live,
                                            const std::vector<Reason>& active,
                                            const std::set<std::string>& owned,
                                            std::chrono::system_clock::time_point now,
                                            const std::map<std::string, Waiting>& waits = {});

}  // namespace faultline
