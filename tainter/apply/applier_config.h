// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>
#include <vector>

#include "base/config_reader.h"
#include "tainter/apply/node_applier.h"

namespace faultline {

// The applier's sections, which faultline-tainter and `faultline-agent
// --standalone` share, read from the mapping that holds them (the root of
// the tainter's file, `standalone:` in the agent's), so the defaults and
// checks are those of Tainter::Options:
//   taint: {key, value, effect}; annotation; max_annotation_bytes;
//   opt_out_label; node_conditions; recovery: {probation, recurring_window,
//   annotation}; valve: {max_new_taints, window, event_interval} and, where
//   `valve_keys` lists them, the fractions of a fleet.
void ReadNodeStateSections(const ConfigMap& parent, Tainter::Options& out,
                           const std::vector<std::string_view>& valve_keys);

}  // namespace faultline
