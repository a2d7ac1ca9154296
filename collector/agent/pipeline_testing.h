// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into Pipeline: not part of the agent's interface.
#pragma once

#include "collector/agent/pipeline.h"

namespace faultline {

struct PipelineTesting {
  // True once every finite source (file without follow) is exhausted and
  // everything it read is committed.
  static bool Idle(const Pipeline& pipeline);
};

}  // namespace faultline
