// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace faultline {

// The bearer token for API requests: a static one from a kubeconfig, or a
// file that is re-read when it changes. Projected service-account tokens
// rotate (the kubelet swaps a symlink), so the file is stat()ed on every
// call and re-read when its mtime, size or inode changed, and at least every
// `reread_interval` regardless; Token(true) forces a re-read (after a 401).
//
// The token never appears in a log line or a Status message.
// Thread-safety: one thread at a time.
class KubeTokenSource {
 public:
  KubeTokenSource(std::string static_token, std::string token_file,
                  std::chrono::seconds reread_interval, const Clock& clock);

  // The current token; empty when there is none (anonymous, or client
  // certificate only). Errors: kUnauthenticated when the token file cannot
  // be read and no earlier token is known.
  Result<std::string> Token(bool force_reread = false);

  bool has_file() const { return !file_.empty(); }

 private:
  friend struct KubeTokenSourceTesting;  // tainter/kube/kube_token_testing.h
  std::string token_;
  const std::string file_;
  const std::chrono::seconds reread_interval_;
  const Clock& clock_;
  bool loaded_ = false;
  std::chrono::steady_clock::time_point last_read_{};
  struct timespec mtime_ {};
  off_t size_ = -1;
  ino_t inode_ = 0;
  int reads_ = 0;
};

}  // namespace faultline
