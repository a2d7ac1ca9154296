// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace faultline {

// `faultline-agent --check-once`: the agent's active checks (collector/checks/)
// run once against the rules, with no Kafka and no other source, and the
// answer given the way Slurm's HealthCheckProgram and LBNL NHC expect: exit
// 0 and nothing on stdout when healthy; exit 1 and one line
// "faultline: RULE: SUMMARY (+N more)" on stdout when a check's record
// matches a tainting rule (each finding also on stderr). A rule with a
// threshold above one record, or with action `event`, is reported on
// stderr only: one look cannot reach a threshold. Exit 2: an invalid config
// or invalid rules, or no check enabled.
//
// Runs are over when every check started and nothing new came for `settle`
// (or at `limit`): a check still running then is not waited for (its result
// would be "hung" anyway after its timeout).
struct CheckOnceOptions {
  std::string config_path;  // empty: the defaults
  std::chrono::milliseconds settle{2000};
  std::chrono::milliseconds limit{60'000};
};
int RunCheckOnce(const CheckOnceOptions& options, std::ostream& out, std::ostream& err);

}  // namespace faultline
