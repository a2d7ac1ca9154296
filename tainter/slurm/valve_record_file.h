// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/status.h"
#include "tainter/core/node_model.h"

namespace faultline {

// The safety valve's shared record (tainter/kube/node_api.h, GetValveRecord)
// for Slurm: one file that every replica reads and replaces under an
// exclusive flock(2) on "PATH.lock". Slurm has no object faultline could
// update optimistically, so the replicas that share a valve must share this
// file: one host, or a shared file system with working flock (NFSv4, Lustre
// with flock, GPFS; the directory slurmctld's StateSaveLocation lives on is
// such a place). The file holds a version line and the record's value; a
// write succeeds only at the version read (kAborted otherwise), which is the
// Lease's contract.
//
// Thread-safety: each call takes the lock; any number of processes and
// threads may call at once.
class ValveRecordFile {
 public:
  explicit ValveRecordFile(std::string path) : path_(std::move(path)) {}

  // resource_version empty: no record yet. kUnavailable: cannot read or lock.
  Result<SharedRecord> Get() const;
  // kAborted: the record moved since `expected_version`; kUnavailable: I/O.
  Status Put(const std::string& value, const std::string& expected_version) const;

 private:
  std::string path_;
};

}  // namespace faultline
