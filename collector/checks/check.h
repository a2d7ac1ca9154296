// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline {

// The outcome of one look at one thing a check watches.
//   kOk       the thing is as expected
//   kFail     it is not (node-problem-detector's exit status 1)
//   kUnknown  the check could not tell (NPD's "anything else"; a library call
//             that returned an error)
//   kHung     the check did not finish within its timeout; made by CheckSource
//   kError    the check could not run at all (a command that cannot start)
enum class CheckStatus { kOk, kFail, kUnknown, kHung, kError };

std::string_view CheckStatusName(CheckStatus status);  // "ok", "fail", "unknown", "hung", "error"

// One finding of a check run. `fields` are the structured values rules
// capture, in the order they are printed; by convention `device` (a PCI
// address such as 0000:3b:00.0, or "node"), `counter` (what was measured),
// `value` and `expected` come first when the check has them. A finding's
// identity for "did this change" is (check, device, counter).
struct CheckFinding {
  CheckStatus status = CheckStatus::kOk;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string message;  // for people; printed last

  std::string Field(std::string_view key) const;  // "" when absent
};

// Appends to `findings` one node-level finding (device "node") per counter
// of `counters` that some finding measured: ok when every device checked
// for it passed, "7 of 8 GPUs pass pcie_width" (`noun` names the devices).
// Rules clear with these only, since a `clear:` lifts a rule's reason for
// the whole node.
void AppendNodeSummaries(std::vector<CheckFinding>& findings,
                         std::span<const std::string_view> counters, std::string_view noun);

// A periodic health check: looks at the node and says what it found.
//
// Run() is called by CheckSource on a worker thread of its own, never on the
// pipeline's thread and never concurrently with itself (a run that exceeded
// its timeout must return before the check runs again). It may block: the
// source reports a run that outlives its timeout as hung and requests
// `stop`; a check that can abandon its work early (a child process, a poll)
// should do so when `stop` is requested. An implementation keeps whatever
// state it needs between runs (baselines, previous counters) without locks.
class Check {
 public:
  virtual ~Check() = default;

  // Stable and short: the `check=` field of its records, which rules match.
  // Lower-case letters, digits, '-', '.', ':' and '_'.
  virtual std::string_view name() const = 0;

  // Looks once. An empty result means "nothing to report this time".
  virtual std::vector<CheckFinding> Run(std::stop_token stop) = 0;
};

}  // namespace faultline
