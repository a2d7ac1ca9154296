// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

#include <initializer_list>

namespace faultline {

// Blocks `signals` in the calling thread and returns them as a set, for the
// main thread to take synchronously (sigwait, sigtimedwait, signalfd). Call
// it before any thread starts: threads inherit the mask, so no handler ever
// interrupts one of them.
sigset_t BlockSignals(std::initializer_list<int> signals);

}  // namespace faultline
