// SPDX-License-Identifier: Apache-2.0
#include "kafka/kafka_conf.h"

namespace faultline {

Result<std::unique_ptr<RdKafka::Conf>> MakeKafkaConf(const KafkaProperties& properties) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  for (const auto& [name, value] : properties) {
    if (conf->set(name, value, error) != RdKafka::Conf::CONF_OK) {
      // The name only: the value may be a secret (sasl.password under a
      // misspelt name is "no such property"), and librdkafka's own message
      // already quotes a value it finds invalid for a known property.
      return InvalidArgumentError(
          std::string("kafka property ").append(name).append(": ").append(error));
    }
  }
  return conf;
}

Status SetKafkaCallbacks(RdKafka::Conf& conf, const KafkaCallbacks& callbacks) {
  std::string error;
  if ((callbacks.event && conf.set("event_cb", callbacks.event, error) != RdKafka::Conf::CONF_OK) ||
      (callbacks.delivery &&
       conf.set("dr_cb", callbacks.delivery, error) != RdKafka::Conf::CONF_OK) ||
      (callbacks.rebalance &&
       conf.set("rebalance_cb", callbacks.rebalance, error) != RdKafka::Conf::CONF_OK)) {
    return InternalError("kafka callbacks: " + error);
  }
  return OkStatus();
}

bool ConsumerOnlyKafkaProperty(std::string_view name) {
  for (std::string_view prefix : {"group.", "session.", "heartbeat.", "auto.",
                                  "partition.assignment", "enable.auto", "max.poll", "fetch."}) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

}  // namespace faultline
