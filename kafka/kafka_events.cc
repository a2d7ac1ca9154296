// SPDX-License-Identifier: Apache-2.0
#include "kafka/kafka_events.h"

#include "base/log.h"

namespace faultline {

void KafkaEvents::event_cb(RdKafka::Event& event) {
  switch (event.type()) {
    case RdKafka::Event::EVENT_ERROR:
      OnKafkaError(event);
      break;
    case RdKafka::Event::EVENT_STATS:
      OnKafkaStatistics(event.str());
      break;
    case RdKafka::Event::EVENT_LOG:
      if (event.severity() <= RdKafka::Event::EVENT_SEVERITY_ERROR) {
        LogWarning("kafka", event.str(), {{"facility", event.fac()}});
      } else {
        LogDebug("kafka", event.str(), {{"facility", event.fac()}});
      }
      break;
    default:
      break;
  }
}

}  // namespace faultline
