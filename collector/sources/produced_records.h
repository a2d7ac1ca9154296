// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <deque>
#include <stop_token>
#include <utility>
#include <vector>

#include "base/log_record.h"
#include "base/status.h"

namespace faultline {

// Source::Read() for a source whose records are made by periodic work of
// its own (polling sysfs, running checks) rather than read from a stream:
// the IB counter poller and the active checks share it.
//
//   produce()  does whatever work is due, appending records to `ready`
//   wait()     blocks until more work may be due, or `stop`; an error ends Read
//
// Returns once at least one record was appended to `out` (at most
// `max_records`), or at once when max_records is 0 or stop is requested.
// Records not taken stay in `ready`, in order, for the next call.
template <typename Produce, typename Wait>
Status ReadProducedRecords(std::deque<LogRecord>& ready, std::vector<LogRecord>& out,
                           std::size_t max_records, const std::stop_token& stop, Produce&& produce,
                           Wait&& wait) {
  for (;;) {
    produce();
    std::size_t appended = 0;
    while (!ready.empty() && appended < max_records) {
      out.push_back(std::move(ready.front()));
      ready.pop_front();
      ++appended;
    }
    if (appended > 0 || max_records == 0 || stop.stop_requested()) return OkStatus();
    if (Status s = wait(); !s.ok()) return s;
  }
}

}  // namespace faultline
