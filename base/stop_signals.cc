// SPDX-License-Identifier: Apache-2.0
#include "base/stop_signals.h"

#include <pthread.h>

namespace faultline {

sigset_t BlockSignals(std::initializer_list<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

}  // namespace faultline
