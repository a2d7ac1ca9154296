// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "base/vocabulary.h"

namespace faultline {

// What a record's source knew about it, for the event's `labels`:
//   kmsg:       priority, facility, sequence
//   journal:    unit, identifier, pid, transport, priority, uid (_UID)
//   podlog:     namespace, pod, uid, container, stream
//   ibcounters: device, port, counter
//   file:       file, line
using Labels = std::map<std::string, std::string>;

// One logical log line, normalized across sources. It owns its strings, so it
// outlives the buffer it was read from and can cross threads.
struct LogRecord {
  std::string source;  // the Source that read it: "kmsg", "journal", "podlog", "ibcounters", "file"
  Origin origin = Origin::kAny;  // who wrote it; what rules' `sources:` select on
  std::string text;              // the line as rules see it, without the trailing newline
  std::chrono::system_clock::time_point time;  // wall clock of the log line itself
  std::string cursor;  // resume position; opaque to all but the Source that made it
  Labels labels;
};

}  // namespace faultline
