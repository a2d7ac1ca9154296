// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// One node as `scontrol show node` prints it (Slurm 22.05), the fields the
// actuator reads. Pure data: no client.
struct SlurmNode {
  std::string name;         // NodeName
  std::string state;        // State= as printed: "IDLE+DRAIN", "DOWN+NOT_RESPONDING", ...
  std::string reason;       // Reason= without Slurm's " [user@time]" tag; empty: none
  std::string reason_user;  // the user in that tag ("root", "slurm"); empty when none
  std::string comment;      // Comment=; empty when unset
  std::string extra;        // Extra=; empty when unset
  std::string boot_time;    // BootTime=; empty when "None"
  std::vector<std::string> partitions;

  // The base state ("IDLE", "DOWN", "ALLOCATED", ...) and its flags.
  bool Drain() const;  // the DRAIN flag (DRAINING, DRAINED in sinfo)
  bool Down() const;   // base state DOWN
  bool Fail() const;   // the FAIL flag (scontrol State=FAIL)
};

// Parses the multi-line form of `scontrol show node [NAME]` (one block per
// node, blank lines between, each field "Key=value" and Reason=, Comment=,
// Extra= alone on their line so their value may hold spaces). Lines it does
// not know are skipped; a block without NodeName= is dropped.
std::vector<SlurmNode> ParseScontrolNodes(std::string_view text);

}  // namespace faultline
