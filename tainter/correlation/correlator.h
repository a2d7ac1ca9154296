// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/fault_event.h"
#include "base/node_identity.h"
#include "tainter/correlation/address_book.h"
#include "tainter/correlation/incidents.h"
#include "tainter/correlation/peer_attribution.h"
#include "tainter/correlation/pod_index.h"

namespace faultline {

// Fleet correlation (tainter/README.md, "Fleet correlation"): every node's
// events in, accusations and incidents out.
//
//  - Observe() takes every event of every node (the attribution stage reads
//    all partitions) and every identity; node addresses come from the node
//    watch through addresses().
//  - An event with a `peer` that resolves to another node is a report
//    against that node (PeerAttribution) and is not held against its
//    reporter: Accused() says so, and the Tainter sets such an event aside.
//  - TakeBlames() turns due accusations into events for the accused node
//    (rule `<rule>.by-peers`, action taint, the reporters' lines as the
//    evidence), which the accused node's owner hands to its Tainter like
//    any event.
//  - TakeIncidents() returns the incidents closed since the last call.
//
// Thread-safety: none; one thread owns it.
class Correlator {
 public:
  struct Options {
    PeerAttribution::Options peers;
    IncidentTracker::Options incidents;
    PodIndex::Options pods;
  };
  using TimePoint = std::chrono::system_clock::time_point;

  explicit Correlator(Options options);

  AddressBook& addresses() { return addresses_; }
  // Pod IP -> node and namespace/pod -> controller, from the pod watch: a
  // peer named by a pod IP resolves to its node (after the address book),
  // an incident's job is its pods' controller when known.
  PodIndex& pods() { return pods_; }
  void ObserveIdentity(const NodeIdentity& identity);
  void Observe(const FaultEvent& event);
  // The node `event` blames, when its peer resolves to a node other than
  // its own; nullopt otherwise (no peer, unknown address, itself).
  std::optional<std::string> Accused(const FaultEvent& event) const;

  // Due accusations of the nodes `owns` accepts (all when empty), as
  // events. Every standing accusation, owned or not, is also evidence for
  // incidents, so every replica attributes incidents alike.
  std::vector<FaultEvent> TakeBlames(TimePoint now,
                                     const std::function<bool(const std::string&)>& owns = {});
  std::vector<Incident> TakeIncidents(TimePoint now, bool all = false) {
    return incidents_.Close(now, all);
  }
  std::vector<Incident> OpenIncidents() const { return incidents_.Open(); }
  std::size_t accusations() const { return peers_.size(); }
  std::size_t open_incidents() const { return incidents_.open_count(); }
  // Reports whose peer did not resolve (counted; the line stays the reporter's).
  std::uint64_t unresolved() const { return unresolved_; }

  // The event a due accusation becomes (exposed for tests).
  static FaultEvent BlameEvent(const PeerAttribution::Blame& blame, TimePoint now);
  static TimePoint EventTime(const FaultEvent& event);

 private:
  AddressBook addresses_;
  PodIndex pods_;
  PeerAttribution peers_;
  IncidentTracker incidents_;
  std::uint64_t unresolved_ = 0;
  std::set<std::pair<std::string, std::string>> evidenced_;  // (accused, rule) given as evidence
};

}  // namespace faultline
