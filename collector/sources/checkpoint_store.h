// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace faultline {

// One small state file per source in a state directory ("kmsg.checkpoint",
// "journal.checkpoint", ...). Saves are atomic: write a temporary file, fsync
// it, rename it over the old one, fsync the directory; a crash at any point
// leaves either the old or the new checkpoint, never a torn one.
//
// The content is the source's own (a JSON object is the convention); this
// class frames it with a version line and a checksum so that a corrupt or
// foreign file is recognised and reported instead of being misread.
//
// Thread-safety: one CheckpointStore per source, used from its thread.
class CheckpointStore {
 public:
  // `directory` is created (0700) if missing. An empty directory disables
  // persistence: Load() finds nothing and Save() succeeds without writing.
  CheckpointStore(std::string directory, const std::string& name);

  // nullopt: no checkpoint yet. kDataLoss: the file exists but is corrupt or
  // not ours (the caller logs it and starts as if there were none).
  // kUnavailable: it could not be read.
  Result<std::optional<std::string>> Load() const;

  // kUnavailable: could not write; the previous checkpoint is intact.
  Status Save(std::string_view content);

  const std::string& path() const { return path_; }

 private:
  std::string directory_;
  std::string path_;
};

}  // namespace faultline
