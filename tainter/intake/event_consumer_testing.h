// SPDX-License-Identifier: Apache-2.0
// Test-only hooks into KafkaEventConsumer: not part of the tainter's interface.
#pragma once

#include <cstdint>
#include <map>

#include "tainter/intake/event_consumer.h"

namespace faultline {

struct KafkaEventConsumerTesting {
  // Offsets committed so far: partition -> next offset.
  static std::map<int32_t, int64_t> CommittedOffsets(const KafkaEventConsumer& consumer);
};

}  // namespace faultline
