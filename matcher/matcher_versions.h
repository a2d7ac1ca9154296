// SPDX-License-Identifier: Apache-2.0
// The matcher's part of `--version`: its regex libraries and the rule packs
// compiled into the program.
#pragma once

#include <vector>

#include "base/version.h"

namespace faultline {

// "re2", "vectorscan", then "rule pack NAME" (its `version:`) for each
// built-in pack, in file-name order.
std::vector<VersionComponent> MatcherVersions();

}  // namespace faultline
