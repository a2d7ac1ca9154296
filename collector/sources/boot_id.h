// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/status.h"

namespace faultline {

// Where Linux keeps the id of the current boot (a UUID, new at each boot).
inline constexpr char kBootIdPath[] = "/proc/sys/kernel/random/boot_id";

// The one reader of the boot id: the kmsg source's cursor starts with it
// (a new boot is read from the ring's start) and every event carries it.
// kUnavailable when `path` cannot be read or holds no usable id.
Result<std::string> ReadBootId(const std::string& path = kBootIdPath);

}  // namespace faultline
