// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include "base/log_record.h"
#include "collector/checks/check.h"

namespace faultline {

// The text of a check record, which is what rules match:
//
//   check=<name> status=<ok|fail|unknown|hung|error>[ <key>=<value>]... msg=<message>
//
// e.g. "check=gpu-inventory status=fail device=0000:3b:00.0 counter=nvidia
// value=7 expected=8 msg=7 of 8 NVIDIA accelerators on the PCI bus".
// Values never contain spaces (a space, tab or newline becomes '_') or
// control bytes, so a rule can capture one with `(?P<value>\S+)`; the message
// is last, runs to the end of the line, and has control bytes replaced by
// spaces and is cut at 512 bytes. Keys are printed in the finding's order.
std::string FormatCheckText(std::string_view check, const CheckFinding& finding);

// The record for a finding: source "checks", origin check, the text above,
// labels check, status and every field. `time` and `cursor` are the caller's.
LogRecord MakeCheckRecord(std::string_view check, const CheckFinding& finding);

// The `missing=` value of a count below what is expected: the addresses seen
// before and gone now, or "unknown" when none of them is (a GPU that never
// came up since the agent started, counted only by the configured number).
// Always written for a shortfall, so a rule's summary never says "missing: ".
std::string MissingOrUnknown(std::string_view known_gone);

}  // namespace faultline
