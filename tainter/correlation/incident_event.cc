// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/incident_event.h"

#include <algorithm>

#include "base/time_format.h"

namespace faultline {

std::string IncidentMessage(const Incident& inc) {
  const bool watchdogs_only =
      !inc.rules.empty() && std::all_of(inc.rules.begin(), inc.rules.end(), [](const auto& r) {
        return r.find("watchdog") != std::string::npos;
      });
  const bool nccl = std::all_of(inc.rules.begin(), inc.rules.end(),
                                [](const auto& r) { return r.rfind("nccl.", 0) == 0; });
  std::string m = watchdogs_only ? "NCCL watchdog storm" : nccl ? "NCCL errors" : "job failure";
  m += " on " + std::to_string(inc.nodes.size()) + " nodes at " + FormatRfc3339(inc.start);
  if (inc.attributed.empty()) return m + ": no hardware evidence on any of its nodes";
  m += ": attributed to node " + inc.attributed + " (";
  bool first = true;
  for (const IncidentEvidence& ev : inc.evidence) {
    m += (first ? "" : "; ") + ev.node + " " + ev.rule;
    if (!ev.summary.empty()) m += ": " + ev.summary;
    first = false;
  }
  return m + ")";
}

std::optional<NodeEvent> IncidentOwnerEvent(const Incident& inc) {
  const std::size_t slash = inc.job.find('/');
  if (inc.owner.name.empty() || inc.owner.kind.empty() || slash == std::string::npos ||
      inc.nodes.empty()) {
    return std::nullopt;
  }
  NodeEvent e;
  // The node it is about: the attributed one, else the first of the job's.
  e.node = inc.attributed.empty() ? *inc.nodes.begin() : inc.attributed;
  e.subject = EventSubject{inc.owner.api_version, inc.owner.kind, inc.job.substr(0, slash),
                           inc.owner.name, inc.owner.uid};
  e.type = "Warning";
  e.reason = std::string(kIncidentEventReason);
  e.message = IncidentMessage(inc);
  return e;
}

}  // namespace faultline
