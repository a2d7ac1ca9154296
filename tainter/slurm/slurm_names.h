// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

// faultline's node name (the agent's: $NODE_NAME or the host name) to the
// Slurm NodeName and back. By default they are the same. Otherwise a
// pattern with one "{name}" ("{name}-ib", "sc-{name}"): the Slurm name is
// the pattern with the node name in place, and a Slurm name that does not
// fit the pattern is not faultline's to manage. An explicit `map`
// (faultline name -> Slurm name) wins over the pattern in both directions.
class SlurmNames {
 public:
  // kInvalidArgument: the pattern does not hold exactly one "{name}", or the
  // map sends two faultline names to one Slurm name.
  static Result<SlurmNames> Create(std::string pattern, std::map<std::string, std::string> map);
  SlurmNames() = default;

  // nullopt: the pattern gives a Slurm name the map gives to another node.
  std::optional<std::string> ToSlurm(std::string_view node) const;
  // nullopt: the Slurm node has no faultline name (outside the pattern).
  std::optional<std::string> ToFaultline(std::string_view slurm_name) const;

 private:
  std::string prefix_;  // the pattern before "{name}"
  std::string suffix_;  // and after it
  std::map<std::string, std::string> to_slurm_;
  std::map<std::string, std::string> to_faultline_;
};

}  // namespace faultline
