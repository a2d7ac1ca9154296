// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>

#include "base/status.h"
#include "collector/sources/wakeup.h"

namespace faultline {

// The seam between KmsgSource and /dev/kmsg: one raw record per ReadRecord(),
// or the two conditions the device signals with errno. KmsgSource keeps all
// the logic (parsing, sequence gaps, overruns, resume) so that tests drive it
// deterministically with a scripted fake instead of the kernel's ring.
//
// Thread-safety: owned and used by the source's thread only.
class KmsgDevice {
 public:
  enum class ReadOutcome {
    kRecord,   // `record` holds one raw record
    kAgain,    // nothing to read now (EAGAIN): Wait(), then read again
    kOverrun,  // the ring overwrote records not yet read (EPIPE); the next
               // read returns the oldest record still there
  };

  virtual ~KmsgDevice() = default;

  // Positions at the oldest record still in the ring (lseek SEEK_SET).
  virtual Status Rewind() = 0;
  // Positions after the newest record: only records written later are read
  // (lseek SEEK_END).
  virtual Status SeekToEnd() = 0;

  // Reads one record into `record` (replacing its content).
  // kUnavailable: any other read error (errno in the message).
  virtual Result<ReadOutcome> ReadRecord(std::string& record) = 0;

  // Blocks until a record may be readable, `stop` is requested, or `timeout`
  // passes (see WaitReadable()).
  virtual Result<WaitOutcome> Wait(const StopWakeup& wakeup, std::stop_token stop,
                                   std::chrono::milliseconds timeout) = 0;
};

// Opens `path` (normally /dev/kmsg) O_RDONLY | O_NONBLOCK | O_CLOEXEC; reads
// use a 16 KiB buffer, more than the kernel's largest record.
// kNotFound: no such file. kPermissionDenied: the kernel refused (reading
// /dev/kmsg needs CAP_SYSLOG where kernel.dmesg_restrict=1). kUnavailable:
// any other open error.
Result<std::unique_ptr<KmsgDevice>> OpenKmsgDevice(const std::string& path);

}  // namespace faultline
