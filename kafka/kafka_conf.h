// SPDX-License-Identifier: Apache-2.0
// Building a librdkafka configuration, the same way for every client both
// daemons create: properties in order (a later one wins, as librdkafka's
// Conf::set overwrites), an error that names the property but never quotes
// its value (it may be a secret), and the callbacks (kafka_events.h routes
// librdkafka's events).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <librdkafka/rdkafkacpp.h>

#include "base/status.h"

namespace faultline {

using KafkaProperties = std::vector<std::pair<std::string, std::string>>;

// A global configuration holding `properties`, set in order. An unknown or
// invalid property is kInvalidArgument "kafka property NAME: why".
Result<std::unique_ptr<RdKafka::Conf>> MakeKafkaConf(const KafkaProperties& properties);

// The callbacks a client wants; null ones are left unset. kInternal when
// librdkafka refuses one (it never does for a valid pointer).
struct KafkaCallbacks {
  RdKafka::EventCb* event = nullptr;
  RdKafka::DeliveryReportCb* delivery = nullptr;
  RdKafka::RebalanceCb* rebalance = nullptr;
};
Status SetKafkaCallbacks(RdKafka::Conf& conf, const KafkaCallbacks& callbacks);

// Whether a passthrough property only means something to a consumer group
// member (group.*, session.*, fetch.*, ...): a producer built from the same
// `kafka.properties` leaves it out.
bool ConsumerOnlyKafkaProperty(std::string_view name);

}  // namespace faultline
