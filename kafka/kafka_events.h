// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <librdkafka/rdkafkacpp.h>

namespace faultline {

// librdkafka's events, sorted the same way for every client: its log lines
// go to the project's log (a warning at error severity or worse, else a
// debug line, with the facility); errors and statistics go to the client.
// Called on the thread that polls the client.
class KafkaEvents : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) final;

 protected:
  // An EVENT_ERROR: a broker down, an authentication failure, ...
  virtual void OnKafkaError(RdKafka::Event& event) = 0;
  // An EVENT_STATS: the JSON of statistics.interval.ms.
  virtual void OnKafkaStatistics(const std::string& /*json*/) {}
};

}  // namespace faultline
