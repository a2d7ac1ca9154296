// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

#include "base/status.h"
#include "tainter/core/node_model.h"

namespace faultline {

// The safety valve's shared record (tainter/kube/node_api.h, GetValveRecord)
// for Slurm: one file that every replica reads and replaces under an
// exclusive flock(2) on "PATH.lock". Slurm has no object faultline could
// update optimistically, so the replicas that share a valve must share this
// file: one host, or a shared file system with working flock (NFSv4, Lustre
// with flock, GPFS; the one slurmctld's StateSaveLocation lives on is such
// a place). The file holds a version line and the record's value; a write
// succeeds only at the version read (kAborted otherwise), which is the
// Lease's contract.
//
// The lock is also a fence between a replica's drain and the others' node
// polls. The applier reserves a place (Get, Put) and then drains; a replica
// that listed the nodes between the two would have seen the node undrained
// *after* the reservation and stop counting it (the valve lets a second
// drain through; measured: 2 of 10 nodes drained, 1 run in 3). So Get takes
// the lock and keeps it, Put keeps it, and the actuator releases it once its
// drain is written (Release); a poll waits for the lock to be free first
// (WaitUnheld). Held at most `max_hold`: a replica that dies holding it loses
// it with its file descriptor.
//
// Thread-safety: one thread at a time per object; any number of processes.
class ValveRecordFile {
 public:
  explicit ValveRecordFile(std::string path,
                           std::chrono::milliseconds max_hold = std::chrono::seconds(30))
      : path_(std::move(path)), max_hold_(max_hold) {}
  ~ValveRecordFile() { Release(); }
  ValveRecordFile(const ValveRecordFile&) = delete;
  ValveRecordFile& operator=(const ValveRecordFile&) = delete;

  // resource_version empty: no record yet. kUnavailable: cannot read, or the
  // lock stayed held by another replica past max_hold.
  Result<SharedRecord> Get();
  // kAborted: the record moved since `expected_version`; kUnavailable: I/O.
  Status Put(const std::string& value, const std::string& expected_version);
  // Lets the lock go (no-op when not held).
  void Release();
  bool held() const { return fd_ >= 0; }
  // Until no other replica holds the lock (at most `wait`): false on timeout.
  bool WaitUnheld(std::chrono::milliseconds wait) const;

 private:
  Status Hold();
  Result<SharedRecord> Read() const;

  std::string path_;
  std::chrono::milliseconds max_hold_;
  int fd_ = -1;  // the lock file, locked, while held
  std::chrono::steady_clock::time_point held_since_{};
};

}  // namespace faultline
