// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace faultline {

// The Reason faultline writes on a node it drains, and how it recognises
// its own. Slurm keeps whatever reason it is given (22.05 stored 2,000 bytes
// unchanged), but people read it in `sinfo -R` (20 columns by default) and
// `scontrol show node`, so faultline writes one line:
//
//   "faultline: nvidia.xid: Xid 79 on 0000:3b:00: GPU has fallen off the bus (+1 more)"
//
// `prefix` first (it is the ownership mark: a drain whose reason starts with
// it is faultline's, tainter/slurm/README.md), then the rule and summary of
// the first active reason, then "(+N more)" when there are others. Control
// characters become spaces. Past `max_bytes` the summary is cut at a UTF-8
// character boundary and ends in "..." (the "(+N more)" is kept); the rule
// is never cut below the prefix. The full reasons, with the log line and
// evidence, are in the node's Extra field (`explain` prints them).
std::string SlurmReasonText(std::string_view prefix, std::string_view rule,
                            std::string_view summary, std::size_t more, std::size_t max_bytes);

// True when `reason` (as scontrol prints it, without the [user@time] tag)
// is one faultline wrote: it starts with `prefix`.
bool IsFaultlineReason(std::string_view reason, std::string_view prefix);

}  // namespace faultline
