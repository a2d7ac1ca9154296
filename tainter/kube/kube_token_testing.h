// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into KubeTokenSource: not part of the client's interface.
#pragma once

#include "tainter/kube/kube_token.h"

namespace faultline {

struct KubeTokenSourceTesting {
  // How many times the token file was (re-)read.
  static int Reads(const KubeTokenSource& tokens) { return tokens.reads_; }
};

}  // namespace faultline
