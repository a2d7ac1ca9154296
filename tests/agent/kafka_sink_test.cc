// SPDX-License-Identifier: Apache-2.0
// KafkaSink against librdkafka's in-process mock cluster (3 brokers): the
// message as the tainter reads it, an outage that delays but loses nothing,
// and the two kinds of failure the pipeline must tell apart.
#include "collector/agent/kafka_sink.h"

#include <set>

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <librdkafka/rdkafkacpp.h>

#include "tests/agent/agent_test_util.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

// A mock cluster living on a handle of its own, with the topic created.
class MockCluster {
 public:
  MockCluster() {
    char err[256];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", err, sizeof(err));
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    REQUIRE(handle_ != nullptr);
    cluster_ = rd_kafka_mock_cluster_new(handle_, 3);
    REQUIRE(cluster_ != nullptr);
    REQUIRE(rd_kafka_mock_topic_create(cluster_, "events", 4, 3) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(handle_);
  }
  std::string bootstraps() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  void AllDown() {
    for (int id = 1; id <= 3; ++id) rd_kafka_mock_broker_set_down(cluster_, id);
  }
  void AllUp() {
    for (int id = 1; id <= 3; ++id) rd_kafka_mock_broker_set_up(cluster_, id);
  }
  rd_kafka_mock_cluster_t* get() { return cluster_; }

 private:
  rd_kafka_t* handle_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

struct Consumed {
  std::string key;
  std::string value;
  std::map<std::string, std::string> headers;
};

// Reads every message of the topic from the beginning (assign, no group).
std::vector<Consumed> ReadTopic(const std::string& brokers, std::size_t expected) {
  std::string err;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  conf->set("bootstrap.servers", brokers, err);
  conf->set("group.id", "reader", err);
  conf->set("enable.auto.commit", "false", err);
  std::unique_ptr<RdKafka::KafkaConsumer> consumer(RdKafka::KafkaConsumer::create(conf.get(), err));
  REQUIRE(consumer);
  std::vector<RdKafka::TopicPartition*> parts;
  parts.reserve(4);
  for (int p = 0; p < 4; ++p) {
    parts.push_back(RdKafka::TopicPartition::create("events", p, RdKafka::Topic::OFFSET_BEGINNING));
  }
  consumer->assign(parts);
  RdKafka::TopicPartition::destroy(parts);
  std::vector<Consumed> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.size() < expected && std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<RdKafka::Message> m(consumer->consume(100));
    if (!m || m->err() != RdKafka::ERR_NO_ERROR) continue;
    Consumed c;
    if (m->key()) c.key = *m->key();
    c.value.assign(static_cast<const char*>(m->payload()), m->len());
    if (RdKafka::Headers* h = m->headers()) {
      for (const auto& header : h->get_all()) {
        c.headers[header.key()] =
            std::string(static_cast<const char*>(header.value()), header.value_size());
      }
    }
    out.push_back(std::move(c));
  }
  consumer->close();
  return out;
}

FaultEvent TestEvent(int n, std::size_t message_bytes = 40) {
  FaultEvent e;
  e.id = MakeEventId("gpu-7", "kmsg", "cursor-" + std::to_string(n), "test.xid");
  e.node = "gpu-7";
  e.source = "kmsg";
  e.origin = Origin::kKernel;
  e.rule = "test.xid";
  e.pack = "agent-test";
  e.category = "hardware";
  e.severity = Severity::kCritical;
  e.action = Action::kTaint;
  e.summary = "Xid 79";
  e.fields = {{"xid", "79"}, {"n", std::to_string(n)}};
  e.message = std::string(message_bytes, 'x');
  return e;
}

KafkaSink::Options SinkOptions(const std::string& brokers) {
  KafkaSink::Options o;
  o.brokers = brokers;
  o.topic = "events";
  o.statistics_interval = milliseconds(100);
  o.properties["log_level"] = "0";                   // the outage tests make librdkafka chatty
  o.properties["reconnect.backoff.max.ms"] = "200";  // come back quickly after an outage
  return o;
}

// Publishes n events and returns the statuses their callbacks saw, by index.
struct Tracker {
  std::vector<std::optional<Status>> results;
  EventSink::DeliveryCallback For(std::size_t i) {
    if (results.size() <= i) results.resize(i + 1);
    return [this, i](const Status& s) { results[i] = s; };
  }
  std::size_t done() const {
    std::size_t n = 0;
    for (const auto& r : results) n += r.has_value();
    return n;
  }
  std::size_t ok() const {
    std::size_t n = 0;
    for (const auto& r : results) n += r.has_value() && r->ok();
    return n;
  }
};

bool PollUntil(KafkaSink& sink, const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    sink.Poll(milliseconds(20));
  }
  return true;
}

TEST_CASE("KafkaSink publishes the event JSON keyed by node with schema and rule headers") {
  MockCluster cluster;
  MetricsRegistry registry;
  AgentMetrics metrics(registry);
  auto sink = KafkaSink::Create(SinkOptions(cluster.bootstraps()), &metrics);
  REQUIRE(sink.ok());
  Tracker tracker;
  for (int i = 0; i < 20; ++i) REQUIRE((*sink)->Publish(TestEvent(i), tracker.For(i)).ok());
  CHECK((*sink)->Flush(std::chrono::seconds(10)) == 0);
  CHECK(tracker.ok() == 20);
  CHECK(PollUntil(**sink, [&] { return (*sink)->reachable(); }));
  CHECK(metrics.kafka_up.value() == 1);

  const auto messages = ReadTopic(cluster.bootstraps(), 20);
  REQUIRE(messages.size() == 20);
  std::set<std::string> ids;
  for (const Consumed& m : messages) {
    CHECK(m.key == "gpu-7");
    CHECK(m.headers.at("schema") == "1");
    CHECK(m.headers.at("rule") == "test.xid");
    auto event = ParseFaultEvent(m.value);
    REQUIRE(event.ok());
    CHECK(event->node == "gpu-7");
    CHECK(event->rule == "test.xid");
    ids.insert(event->id);
  }
  CHECK(ids.size() == 20);
}

TEST_CASE("KafkaSink buffers through an outage of every broker and then delivers all") {
  MockCluster cluster;
  MetricsRegistry registry;
  AgentMetrics metrics(registry);
  auto sink = KafkaSink::Create(SinkOptions(cluster.bootstraps()), &metrics);
  REQUIRE(sink.ok());
  Tracker tracker;
  REQUIRE((*sink)->Publish(TestEvent(0), tracker.For(0)).ok());
  REQUIRE(PollUntil(**sink, [&] { return tracker.ok() == 1; }));

  cluster.AllDown();
  for (int i = 1; i <= 50; ++i) REQUIRE((*sink)->Publish(TestEvent(i), tracker.For(i)).ok());
  CHECK(PollUntil(**sink, [&] { return !(*sink)->reachable(); }));
  CHECK(metrics.kafka_up.value() == 0);
  CHECK(tracker.done() == 1);  // nothing failed, nothing delivered: buffered

  cluster.AllUp();
  REQUIRE(PollUntil(**sink, [&] { return tracker.ok() == 51; }));
  CHECK(PollUntil(**sink, [&] { return (*sink)->reachable(); }));
  const auto messages = ReadTopic(cluster.bootstraps(), 51);
  std::set<std::string> values;
  for (const auto& m : messages) values.insert(m.value);
  CHECK(values.size() == 51);  // idempotent: no duplicates
}

TEST_CASE("KafkaSink reports a full local queue as kResourceExhausted") {
  MockCluster cluster;
  KafkaSink::Options options = SinkOptions(cluster.bootstraps());
  options.queue_max_messages = 5;
  cluster.AllDown();
  auto sink = KafkaSink::Create(options, nullptr);
  REQUIRE(sink.ok());
  Tracker tracker;
  Status status;
  int accepted = 0;
  for (int i = 0; i < 10 && status.ok(); ++i) {
    status = (*sink)->Publish(TestEvent(i), tracker.For(i));
    accepted += status.ok();
  }
  CHECK(status.code() == StatusCode::kResourceExhausted);
  CHECK(accepted == 5);
  cluster.AllUp();
  CHECK((*sink)->Flush(std::chrono::seconds(10)) == 0);
  CHECK(tracker.ok() == 5);
}

TEST_CASE("KafkaSink tells a message rejected for good from one that timed out") {
  MockCluster cluster;
  SUBCASE("too large for the client: kInvalidArgument at once") {
    KafkaSink::Options options = SinkOptions(cluster.bootstraps());
    options.properties["message.max.bytes"] = "2000";
    auto sink = KafkaSink::Create(options, nullptr);
    REQUIRE(sink.ok());
    Tracker tracker;
    CHECK((*sink)->Publish(TestEvent(1, 5000), tracker.For(0)).code() ==
          StatusCode::kInvalidArgument);
  }
  SUBCASE("refused by the broker: the callback says kInvalidArgument") {
    rd_kafka_mock_push_request_errors(cluster.get(), 0 /* ApiKey Produce */, 1,
                                      RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    auto sink = KafkaSink::Create(SinkOptions(cluster.bootstraps()), nullptr);
    REQUIRE(sink.ok());
    Tracker tracker;
    REQUIRE((*sink)->Publish(TestEvent(1), tracker.For(0)).ok());
    REQUIRE(PollUntil(**sink, [&] { return tracker.done() == 1; }));
    CHECK(tracker.results[0]->code() == StatusCode::kInvalidArgument);
  }
  SUBCASE("message.timeout passes during an outage: kDeadlineExceeded") {
    KafkaSink::Options options = SinkOptions(cluster.bootstraps());
    options.message_timeout = milliseconds(300);
    cluster.AllDown();
    auto sink = KafkaSink::Create(options, nullptr);
    REQUIRE(sink.ok());
    Tracker tracker;
    REQUIRE((*sink)->Publish(TestEvent(1), tracker.For(0)).ok());
    REQUIRE(PollUntil(**sink, [&] { return tracker.done() == 1; }));
    CHECK(tracker.results[0]->code() == StatusCode::kDeadlineExceeded);
  }
}

TEST_CASE("KafkaSink refuses an unknown librdkafka property with its name") {
  KafkaSink::Options options = SinkOptions("127.0.0.1:1");
  options.properties["no.such.property"] = "1";
  auto sink = KafkaSink::Create(options, nullptr);
  REQUIRE_FALSE(sink.ok());
  CHECK(sink.error().code() == StatusCode::kInvalidArgument);
  CHECK(sink.error().message().find("no.such.property") != std::string::npos);
}

}  // namespace
}  // namespace faultline
