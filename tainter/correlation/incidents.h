// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/fault_event.h"
#include "tainter/correlation/pod_index.h"

namespace faultline {

// Hardware evidence on a node: what an incident can be attributed to.
struct IncidentEvidence {
  std::string node;
  std::string rule;
  std::string summary;
  std::chrono::system_clock::time_point at;
};

// One failure of one job seen from many nodes: the NCCL watchdog timeouts and
// errors that every rank prints when one of them fails, grouped.
struct Incident {
  std::string id;   // job + start time: the same incident rebuilt gets the same id
  std::string job;  // namespace/job: the pods' controller's name, else IncidentTracker::JobOf
  JobOwner owner;   // the pods' controller when the pod watch knows it; else empty
  std::chrono::system_clock::time_point start;
  std::chrono::system_clock::time_point end;
  std::set<std::string> nodes;
  std::set<std::string> rules;
  std::size_t lines = 0;
  std::string attributed;                  // empty: no node had hardware evidence
  std::vector<IncidentEvidence> evidence;  // of every node of the incident, oldest first
};

// Groups job-level failure lines into incidents and attributes each to the
// node that had hardware evidence around it.
//
//  - An incident line is an event from a pod log (labels `namespace`, `pod`)
//    of a rule whose id starts with one of `rule_prefixes` (default `nccl.`).
//    Its job is JobOf(namespace, pod). Lines of one job whose gaps are
//    shorter than `window` form one incident.
//  - Hardware evidence is an event that is not from a pod log, of a rule
//    that taints (whatever its threshold) or of severity error or critical,
//    whose category is not `application` or
//    `informational` (an Xid, an IB port down, a PCIe fatal error), or a
//    peer accusation (AddEvidence). Evidence within `lookback` before the
//    incident's start, or during it, on one of its nodes attributes the
//    incident to that node (the earliest evidence wins; all is listed).
//  - An incident is closed `window` after its last line; only one with at
//    least `min_nodes` nodes is reported (one rank's error is not a fleet
//    event).
//
// Pure logic, time given by the caller; bounded. Thread-safety: none.
class IncidentTracker {
 public:
  struct Options {
    std::chrono::seconds window{std::chrono::minutes(2)};
    std::chrono::seconds lookback{std::chrono::minutes(10)};
    int min_nodes = 2;
    std::vector<std::string> rule_prefixes{"nccl."};
    std::size_t max_open = 1000;
    std::size_t max_evidence_per_node = 16;
    std::size_t max_nodes_evidence = 100'000;
  };
  using TimePoint = std::chrono::system_clock::time_point;

  explicit IncidentTracker(Options options) : options_(std::move(options)) {}
  using OwnerOf =
      std::function<std::optional<JobOwner>(const std::string& ns, const std::string& pod)>;
  // Where a pod's controller is looked up (the pod watch); without it, or
  // when it does not know the pod, the job is JobOf's guess from the name.
  void SetOwnerOf(OwnerOf owner_of) { owner_of_ = std::move(owner_of); }

  // Every event of every node; returns true if it was an incident line.
  bool Observe(const FaultEvent& event, TimePoint at);
  void AddEvidence(IncidentEvidence evidence);
  // Incidents whose last line is more than `window` before `now`; with
  // `all`, every open one (the end of a `faultline-tainter incidents` read).
  std::vector<Incident> Close(TimePoint now, bool all = false);
  std::vector<Incident> Open() const;
  std::size_t open_count() const { return open_.size(); }

  // "namespace/job": the pod name without its replica ordinal, random
  // suffix and role ("train-llm-worker-17" -> "train-llm"). Empty when the
  // labels do not say.
  static std::string JobOf(const std::string& ns, const std::string& pod);
  static bool IsHardwareEvidence(const FaultEvent& event);
  bool IsIncidentLine(const FaultEvent& event) const;

 private:
  void Attribute(Incident& incident) const;

  Options options_;
  OwnerOf owner_of_;
  std::map<std::string, Incident> open_;  // by job
  std::vector<Incident> finished_;        // ended by a gap, reported at the next Close()
  std::map<std::string, std::deque<IncidentEvidence>> evidence_;  // by node
};

// "2026-11-22T07:02:53Z  ml/train-llm  64 nodes  attributed: gpu-17 (ib.port-down ...)",
// then "    owner: PyTorchJob/train-llm" when known, nodes, lines and evidence.
std::string FormatIncident(const Incident& incident);

}  // namespace faultline
