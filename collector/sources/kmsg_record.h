// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace faultline {

// One record as /dev/kmsg returns it from a single read(2)
// (Documentation/ABI/testing/dev-kmsg in the kernel tree):
//
//   "6,339,5140900,-;NET: Registered protocol family 10\n SUBSYSTEM=net\n"
//    | |   |       | | |                                   |
//    | |   |       | | message: bytes < 0x20, >= 0x7f and  continuation lines: one
//    | |   |       | |   '\' are escaped by the kernel as  " KEY=VALUE\n" each
//    | |   |       | |   \xNN (UTF-8 arrives as \xNN too)  (escaped the same way)
//    | |   |       | ';' ends the prefix
//    | |   |       flags ('-', 'c', '+'); newer kernels may add more comma-separated
//    | |   |       fields (",caller=T42") before ';': they are ignored
//    | |   microseconds since boot (CLOCK_MONOTONIC-like, not wall time)
//    | sequence number: +1 per record; a gap means records were overwritten
//    syslog facility * 8 + priority
struct KmsgRecord {
  int facility = 0;  // 0 = kern, 1 = user (written via /dev/kmsg by user space), ...
  int priority = 0;  // 0 (emerg) .. 7 (debug)
  std::uint64_t sequence = 0;
  std::chrono::microseconds since_boot{0};
  std::string message;                                    // unescaped, without the trailing newline
  std::vector<std::pair<std::string, std::string>> dict;  // continuation KEY=VALUE, unescaped
};

// Parses one raw record. Pure: no I/O, no clock, no global state; safe from
// any thread. Unknown extra prefix fields are ignored; a continuation line
// without '=' is skipped.
//
// kInvalidArgument: not a kmsg record (no ';', a missing or non-numeric
// prefix field, numbers out of range); the message says which field.
Result<KmsgRecord> ParseKmsgRecord(std::string_view raw);

// The sequence number alone, for accounting when the rest of a record does
// not parse. nullopt if even that is missing.
std::optional<std::uint64_t> ParseKmsgSequence(std::string_view raw);

// Replaces each "\xNN" (two hex digits, either case) by that byte; anything
// else, including a malformed escape, is copied unchanged.
std::string UnescapeKmsg(std::string_view text);

}  // namespace faultline
