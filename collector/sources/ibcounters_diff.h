// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace faultline {

// The pure half of the ibcounters source: values read from sysfs, snapshots
// of every InfiniBand port, and the records a change between two snapshots
// makes. No I/O, no clock; safe from any thread. Fuzzed.
//
// sysfs layout read by IbCountersSource (root is /sys in production):
//   <root>/class/infiniband/<device>/ports/<port>/state        "4: ACTIVE"
//   <root>/class/infiniband/<device>/ports/<port>/phys_state   "5: LinkUp"
//   <root>/class/infiniband/<device>/ports/<port>/counters/{link_downed,
//       link_error_recovery,symbol_error}                      "4"

// The counters watched, in the order they are reported.
inline constexpr std::string_view kIbCounterNames[] = {"link_downed", "link_error_recovery",
                                                       "symbol_error"};

struct IbPortKey {
  std::string device;  // "mlx5_0"
  std::string port;    // "1"
  // clang-tidy 14 reads the 0 a defaulted <=> compares with as a null pointer.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const IbPortKey&) const = default;
};

struct IbPortState {
  std::optional<std::string> state;  // "ACTIVE", numeric prefix stripped; nullopt if unreadable
  std::optional<std::string> phys_state;          // "LinkUp"
  std::map<std::string, std::uint64_t> counters;  // only those that could be read
  bool operator==(const IbPortState&) const = default;
};

using IbSnapshot = std::map<IbPortKey, IbPortState>;

// One record's worth of change.
struct IbChange {
  IbPortKey port;
  std::string
      counter;       // "state", "phys_state", "link_downed", ..., or "port" (appeared/disappeared)
  std::string text;  // "mlx5_0 port 1 state ACTIVE -> DOWN"
  bool operator==(const IbChange&) const = default;
};

// "4: ACTIVE\n" -> "ACTIVE"; "LinkUp" -> "LinkUp". nullopt if nothing is left.
std::optional<std::string> ParseSysfsState(std::string_view raw);

// "12\n" -> 12. nullopt unless the value is decimal digits (surrounding
// whitespace allowed) that fit in 64 bits.
std::optional<std::uint64_t> ParseSysfsCounter(std::string_view raw);

// The records for what changed from `before` to `after`:
//   - state or phys_state changed:  "mlx5_0 port 1 state ACTIVE -> DOWN",
//                                   "mlx5_0 port 1 phys_state LinkUp -> Polling"
//   - a counter grew:               "mlx5_0 port 1 link_downed +1 (total 4)"
//   - a port appeared:              "mlx5_0 port 1 appeared, state ACTIVE"
//   - a port disappeared:           "mlx5_0 port 1 disappeared"
// A counter that went down (reset, driver reload) or a value that was not
// readable before is a new baseline: no record. Ordered by port, then state,
// phys_state, then the counters in kIbCounterNames order.
std::vector<IbChange> DiffIbSnapshots(const IbSnapshot& before, const IbSnapshot& after);

// At the very first poll (no checkpoint), the records for ports that are
// already not ACTIVE: "mlx5_0 port 1 state DOWN at start". No arrow, so rules
// written for transitions ("-> DOWN") do not fire on unused ports at every
// fresh install; a rule may match this text on purpose. Reported once: later
// starts resume from the checkpointed snapshot.
std::vector<IbChange> DescribeInitialIbSnapshot(const IbSnapshot& first);

// The checkpoint form: {"ports":[{"device":..,"port":..,"state":..,
// "phys_state":..,"counters":{..}}]}. FromJson: kInvalidArgument if it is
// not that shape.
std::string IbSnapshotToJson(const IbSnapshot& snapshot);
Result<IbSnapshot> IbSnapshotFromJson(std::string_view json);

}  // namespace faultline
