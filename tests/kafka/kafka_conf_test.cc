// SPDX-License-Identifier: Apache-2.0
// Building a librdkafka configuration the one way every client of both
// daemons does (kafka/kafka_conf.h).
#include "kafka/kafka_conf.h"

#include <string>

#include <doctest/doctest.h>

namespace faultline {
namespace {

std::string Get(RdKafka::Conf& conf, const std::string& name) {
  std::string value;
  REQUIRE(conf.get(name, value) == RdKafka::Conf::CONF_OK);
  return value;
}

TEST_CASE("properties are set in order and a later one wins, as librdkafka's Conf::set") {
  auto conf = MakeKafkaConf({{"bootstrap.servers", "a:9092"},
                             {"client.id", "faultline-agent"},
                             {"bootstrap.servers", "b:9092"}});
  REQUIRE(conf.ok());
  CHECK(Get(**conf, "bootstrap.servers") == "b:9092");
  CHECK(Get(**conf, "client.id") == "faultline-agent");
}

TEST_CASE("a bad property is named, its value (maybe a secret) never quoted") {
  auto unknown = MakeKafkaConf({{"sasl.pasword", "hunter2-secret"}});  // misspelt
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().code() == StatusCode::kInvalidArgument);
  CHECK(unknown.error().message().find("kafka property sasl.pasword") == 0);
  CHECK(unknown.error().message().find("hunter2-secret") == std::string::npos);
}

TEST_CASE("consumer-group settings are left out of a producer built from the same properties") {
  for (const char* name : {"group.instance.id", "session.timeout.ms", "heartbeat.interval.ms",
                           "auto.offset.reset", "partition.assignment.strategy",
                           "enable.auto.commit", "max.poll.interval.ms", "fetch.wait.max.ms"}) {
    CHECK_MESSAGE(ConsumerOnlyKafkaProperty(name), name);
  }
  for (const char* name : {"security.protocol", "sasl.mechanism", "ssl.ca.location",
                           "bootstrap.servers", "enable.idempotence", "client.id"}) {
    CHECK_FALSE_MESSAGE(ConsumerOnlyKafkaProperty(name), name);
  }
}

TEST_CASE("callbacks: only the given ones are set") {
  struct Events : RdKafka::EventCb {
    void event_cb(RdKafka::Event&) override {}
  } events;
  auto conf = MakeKafkaConf({});
  REQUIRE(conf.ok());
  CHECK(SetKafkaCallbacks(**conf, {.event = &events}).ok());
  RdKafka::EventCb* set = nullptr;
  CHECK((*conf)->get(set) == RdKafka::Conf::CONF_OK);
  CHECK(set == &events);
  RdKafka::DeliveryReportCb* delivery = nullptr;
  (*conf)->get(delivery);
  CHECK(delivery == nullptr);
}

}  // namespace
}  // namespace faultline
