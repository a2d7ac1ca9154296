// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// The safety valve's limits (the config's `valve.*`).
struct ValveLimits {
  double max_fraction = 0.10;           // of managed nodes tainted at once
  double per_rule_max_fraction = 0.10;  // the same, per rule
  int min_allowed = 1;                  // each fraction allows at least this many
  int max_new_taints = 5;               // per new_taint_window; 0: no limit
  std::chrono::seconds new_taint_window{std::chrono::minutes(10)};
};

// One new taint in the fleet's shared record (the Lease every replica
// updates optimistically): which node, and when it was reserved.
struct ValveReservation {
  std::string node;
  std::chrono::system_clock::time_point at;
};

// The one place the safety valve is decided: the limit arithmetic, the
// refusal texts (which limit, the counts, the limit) and the shared record's
// codec. Pure: no I/O, no clock reads (the caller passes the time).
//
// Two views ask it. The Policy asks Refuse() with what this process knows
// (its node inventory and the new taints it made); the applier, before it
// writes a new taint, asks Reserve() with the shared record it read, and
// writes back the record Reserve() returns (a GET and a PUT, nothing else).
//
// Thread-safety: none; one thread owns it (the Policy's).
class FleetValve {
 public:
  explicit FleetValve(ValveLimits limits) : limits_(limits) {}

  // How many of `managed` nodes `fraction` allows: floor(fraction x managed),
  // at least min_allowed.
  int Allowed(double fraction, int managed) const;
  // max_fraction's limit for `managed` nodes.
  int FleetLimit(int managed) const { return Allowed(limits_.max_fraction, managed); }

  // This process's view: `tainted` managed nodes carry faultline's taint,
  // `tainted_for_rule` of them for `rule`. Empty when one more taint is
  // allowed, else which limit refuses it. Counts the new taints of the
  // last new_taint_window noted with NoteNewTaint (forgetting older ones).
  std::string Refuse(int managed, int tainted, int tainted_for_rule, const std::string& rule,
                     std::chrono::steady_clock::time_point now);
  // A new taint of `node` was decided at `now` (counts for max_new_taints);
  // UndoNewTaint takes `node`'s latest one back (the fleet refused it after
  // all: its own time leaves the window, not the latest new taint's).
  void NoteNewTaint(std::chrono::steady_clock::time_point now, const std::string& node) {
    recent_.push_back({now, node});
  }
  void UndoNewTaint(const std::string& node);

  // What this replica knows of the fleet when it asks the shared record.
  struct FleetView {
    int managed = 0;
    // Managed nodes, other than the one asking, that carry faultline's
    // taint as this replica sees them.
    std::set<std::string> tainted;
    // Whether a node reserved at `at` counts as tainted although this
    // replica has not seen its taint (it manages the node and has not
    // observed it since `at`: another replica's taint still on its way
    // through the watch).
    std::function<bool(const std::string& node, std::chrono::system_clock::time_point at)> unseen;
  };
  struct FleetAnswer {
    std::string refusal;  // empty: granted
    std::string record;   // granted: the record to write back (with `node` reserved)
  };
  // The fleet-wide valve over the shared record's value as read (`record`,
  // possibly empty or not ours: read as no reservations). Reservations are
  // kept new_taint_window, and at least kWatchGrace (the watch's delay).
  FleetAnswer Reserve(std::string_view record, const std::string& node, const FleetView& view,
                      std::chrono::system_clock::time_point now) const;

  // The shared record's codec: a JSON array of {"node","at"(RFC 3339)}.
  // Decode skips what it cannot read (an empty or foreign record reads as none).
  static std::vector<ValveReservation> DecodeRecord(std::string_view text);
  static std::string EncodeRecord(const std::vector<ValveReservation>& reservations);

  static constexpr std::chrono::seconds kWatchGrace{30};

  const ValveLimits& limits() const { return limits_; }

 private:
  ValveLimits limits_;
  struct NewTaint {
    std::chrono::steady_clock::time_point at;
    std::string node;
  };
  std::deque<NewTaint> recent_;  // this process's new taints, oldest first
};

}  // namespace faultline
