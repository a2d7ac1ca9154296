// SPDX-License-Identifier: Apache-2.0
// Test-only hooks of base/log.h: not part of the interface programs use.
#pragma once

#include <functional>
#include <string_view>

namespace faultline {

// Replaces stderr, for tests that must see a log line (prefer a counter).
// Pass nullptr to restore stderr.
void SetLogSinkForTest(std::function<void(std::string_view line)> sink);

}  // namespace faultline
