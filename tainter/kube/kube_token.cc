// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_token.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "base/log.h"

namespace faultline {

KubeTokenSource::KubeTokenSource(std::string static_token, std::string token_file,
                                 std::chrono::seconds reread_interval, const Clock& clock)
    : token_(std::move(static_token)),
      file_(std::move(token_file)),
      reread_interval_(reread_interval),
      clock_(clock) {}

Result<std::string> KubeTokenSource::Token(bool force_reread) {
  if (file_.empty()) return token_;
  struct stat st {};
  const bool stat_ok = ::stat(file_.c_str(), &st) == 0;
  const auto now = clock_.MonotonicNow();
  bool reread = force_reread || !loaded_ || now - last_read_ >= reread_interval_;
  if (stat_ok && (st.st_mtim.tv_sec != mtime_.tv_sec || st.st_mtim.tv_nsec != mtime_.tv_nsec ||
                  st.st_size != size_ || st.st_ino != inode_)) {
    reread = true;
  }
  if (!reread) return token_;

  std::ifstream in(file_, std::ios::binary);
  if (!in) {
    // Keep using the last good token: a rotation in progress may briefly
    // hide the file, and the server will say 401 if the old one expired.
    if (loaded_) return token_;
    return UnauthenticatedError("cannot read the token file " + file_);
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string token = buf.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  const bool changed = loaded_ && token != token_;
  token_ = std::move(token);
  loaded_ = true;
  last_read_ = now;
  ++reads_;
  if (stat_ok) {
    mtime_ = st.st_mtim;
    size_ = st.st_size;
    inode_ = st.st_ino;
  }
  if (changed) {
    LogInfo("kube", "service-account token changed; using the new one", {{"file", file_}});
  }
  return token_;
}

}  // namespace faultline
