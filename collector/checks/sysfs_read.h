// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace faultline {

// Reads a small sysfs/procfs file whole (at most 64 KiB; sysfs attributes
// are one page). nullopt: it cannot be opened or read.
std::optional<std::string> ReadSysfsText(const std::filesystem::path& path);

// A sysfs number: decimal, or hexadecimal with 0x ("0x10de", "0x030200"),
// surrounding whitespace ignored. nullopt: absent or not a number.
std::optional<std::uint64_t> ReadSysfsNumber(const std::filesystem::path& path);
std::optional<std::uint64_t> ParseSysfsNumber(std::string_view text);

}  // namespace faultline
