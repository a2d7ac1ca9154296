// SPDX-License-Identifier: Apache-2.0
// The tainter's Kafka path against librdkafka's in-process mock cluster (the
// real Kafka protocol: group joins, commits, offsets for times).
#include "tainter/intake/event_consumer.h"

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <librdkafka/rdkafkacpp.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/log.h"
#include "tainter/intake/event_consumer_testing.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_node_api.h"
#include "tests/fakes/sample_event.h"

namespace faultline {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr char kTopic[] = "events";
constexpr char kDeadLetter[] = "events.dlq";
constexpr char kKey[] = "faultline.dev/faulty";
constexpr char kAnnotation[] = "faultline.dev/reasons";
constexpr int16_t kJoinGroupApiKey = 11;  // the Kafka protocol's number for JoinGroup

// A 1-broker mock cluster with the events topic (4 partitions) and the
// dead-letter topic, owned by its own librdkafka handle.
class MockKafka {
 public:
  MockKafka() {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    REQUIRE(rk_ != nullptr);
    mc_ = rd_kafka_mock_cluster_new(rk_, 1);
    REQUIRE(mc_ != nullptr);
    REQUIRE(rd_kafka_mock_topic_create(mc_, kTopic, 4, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    REQUIRE(rd_kafka_mock_topic_create(mc_, kDeadLetter, 1, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
    bootstraps_ = rd_kafka_mock_cluster_bootstraps(mc_);
    std::unique_ptr<RdKafka::Conf> pconf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string e;
    pconf->set("bootstrap.servers", bootstraps_, e);
    producer_.reset(RdKafka::Producer::create(pconf.get(), e));
    REQUIRE(producer_ != nullptr);
  }
  ~MockKafka() {
    producer_.reset();
    rd_kafka_mock_cluster_destroy(mc_);
    rd_kafka_destroy(rk_);
  }

  const std::string& bootstraps() const { return bootstraps_; }

  // Counts the JoinGroup requests the broker answers from now on. The mock
  // keeps no request log, but each request of an API takes one entry from
  // the broker's error stack for it, so "no error" entries count requests.
  void CountJoinGroups() {
    for (int i = 0; i < 64; ++i) {
      REQUIRE(rd_kafka_mock_broker_push_request_error_rtts(mc_, 1, kJoinGroupApiKey, 1,
                                                           RD_KAFKA_RESP_ERR_NO_ERROR,
                                                           0) == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    join_slots_ = JoinSlotsLeft();
  }
  std::size_t JoinGroupRequests() { return join_slots_ - JoinSlotsLeft(); }

  void Produce(const std::string& key, const std::string& value) {
    RdKafka::ErrorCode e = producer_->produce(
        kTopic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
        const_cast<char*>(value.data()), value.size(), key.data(), key.size(), 0, nullptr);
    REQUIRE(e == RdKafka::ERR_NO_ERROR);
    REQUIRE(producer_->flush(5000) == RdKafka::ERR_NO_ERROR);
  }
  void Produce(const FaultEvent& e) { Produce(e.node, SerializeFaultEvent(e)); }

  struct DeadLetter {
    std::string key;
    std::string value;
    std::map<std::string, std::string> headers;
  };
  // Reads the dead-letter topic from its start until `count` messages came
  // or 10 s passed. (Copies: a Message keeps its consumer alive.)
  std::vector<DeadLetter> ReadDeadLetters(std::size_t count) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string e;
    conf->set("bootstrap.servers", bootstraps_, e);
    conf->set("group.id", "dlq-reader", e);
    std::unique_ptr<RdKafka::KafkaConsumer> c(RdKafka::KafkaConsumer::create(conf.get(), e));
    REQUIRE(c != nullptr);
    std::vector<RdKafka::TopicPartition*> parts = {
        RdKafka::TopicPartition::create(kDeadLetter, 0, RdKafka::Topic::OFFSET_BEGINNING)};
    c->assign(parts);
    delete parts[0];
    std::vector<DeadLetter> out;
    const auto deadline = std::chrono::steady_clock::now() + seconds(10);
    while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
      std::unique_ptr<RdKafka::Message> m(c->consume(100));
      if (!m || m->err() != RdKafka::ERR_NO_ERROR) continue;
      DeadLetter d;
      d.key = m->key() ? *m->key() : "";
      d.value.assign(static_cast<const char*>(m->payload()), m->len());
      if (RdKafka::Headers* h = m->headers()) {
        for (const RdKafka::Headers::Header& hd : h->get_all()) {
          d.headers[hd.key()] = std::string(static_cast<const char*>(hd.value()), hd.value_size());
        }
      }
      out.push_back(std::move(d));
    }
    c->close();
    return out;
  }

 private:
  std::size_t JoinSlotsLeft() {
    std::size_t left = 0;
    REQUIRE(rd_kafka_mock_broker_error_stack_cnt(mc_, 1, kJoinGroupApiKey, &left) ==
            RD_KAFKA_RESP_ERR_NO_ERROR);
    return left;
  }

  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
  std::string bootstraps_;
  std::size_t join_slots_ = 0;
  std::unique_ptr<RdKafka::Producer> producer_;
};

// One tainter replica: a Tainter over the shared FakeNodeApi and its consumer.
struct Replica {
  Replica(MockKafka& kafka, FakeNodeApi& api, const Clock& clock, Tainter::Options options = {},
          std::string group = "tainter") {
    auto t = Tainter::Create(std::move(options), ApplierApis{api, api}, metrics, clock);
    REQUIRE(t.ok());
    tainter = std::move(*t);
    REQUIRE(tainter->AdoptAll().ok());
    KafkaEventConsumer::Options o;
    o.brokers = kafka.bootstraps();
    o.topic = kTopic;
    o.group = std::move(group);
    o.dead_letter_topic = kDeadLetter;
    // No short topic.metadata.refresh.interval.ms: see "a replica alone in
    // its group joins in one round".
    o.properties = {
        {"session.timeout.ms", "4000"}, {"heartbeat.interval.ms", "500"}, {"log_level", "3"}};
    auto c = KafkaEventConsumer::Create(o, *tainter, metrics, clock);
    REQUIRE(c.ok());
    consumer = std::move(*c);
    REQUIRE(consumer->Start().ok());
  }
  ~Replica() {
    if (consumer) consumer->Close();
  }
  void Step() {
    consumer->Poll(milliseconds(50));
    tainter->Tick();
    consumer->Commit();
  }
  std::uint64_t Decisions(const std::string& outcome) {
    return metrics.CounterValue("faultline_tainter_decisions_total", {{"outcome", outcome}});
  }

  MetricsRegistry metrics;
  std::unique_ptr<Tainter> tainter;
  std::unique_ptr<KafkaEventConsumer> consumer;
};

// Steps the replicas until `done` holds; false after `limit`.
// The bound covers the consumer group's join (about 3 s on an idle machine;
// 18 s were seen with two sanitizer builds beside it): a bound, not a timing.
bool RunUntil(const std::vector<Replica*>& replicas, const std::function<bool()>& done,
              seconds limit = seconds(45)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    for (Replica* r : replicas) r->Step();
    if (done()) return true;
  }
  return false;
}

int next_id = 0;

FaultEvent Event(const Clock& clock, const std::string& node,
                 const std::string& rule = "nvidia.xid") {
  FaultEvent e = SampleEvent(node,
                             MakeEventId(node, "kmsg",
                                         std::to_string(++next_id) + "-" +
                                             std::to_string(clock.Now().time_since_epoch().count()),
                                         rule),
                             clock.Now());
  e.rule = rule;
  e.pack = "test";
  return e;
}

struct Cluster {
  Cluster() {
    SetLogLevel(LogLevel::kWarning);
    for (int i = 0; i < 10; ++i) api.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
  }
  FakeClock clock{std::chrono::system_clock::now()};  // Kafka timestamps are real
  FakeNodeApi api;
  MockKafka kafka;
};

TEST_CASE("an event from Kafka taints its node with annotation and Event, once, and is committed") {
  Cluster c;
  Replica r(c.kafka, c.api, c.clock);
  FaultEvent e = Event(c.clock, "gpu-4");
  c.kafka.Produce(e);
  c.kafka.Produce(e);  // the agent re-sent it
  REQUIRE(RunUntil({&r}, [&] { return r.Decisions("duplicate") == 1; }));
  CHECK(c.api.HasTaint("gpu-4", kKey));
  CHECK(c.api.Node("gpu-4")->annotations.count("faultline.dev/reasons") == 1);
  CHECK(c.api.EventsFor("gpu-4").size() == 1);
  CHECK(r.Decisions("taint") == 1);
  CHECK(c.api.writes() == 1);
  r.consumer->Commit(true);
  std::int64_t committed = 0;
  for (const auto& [p, off] : KafkaEventConsumerTesting::CommittedOffsets(*r.consumer)) {
    committed += off;
  }
  CHECK(committed == 2);
  CHECK(r.metrics.CounterValue("faultline_tainter_events_consumed_total") == 2);
}

// The mock coordinator holds every JoinGroup for 3 s (a real broker's
// group.initial.rebalance.delay.ms), and librdkafka's periodic metadata
// refresh runs on a timer started with the consumer, so with the 1 s
// interval the Replica once set, a refresh landed within a millisecond of
// the JoinGroup response. librdkafka 2.0 treats a refresh that arrives while
// the leader waits for its assignor's metadata as a reason to rejoin
// (rd_kafka_cgrp_metadata_update_check, join state wait-metadata): another
// 3 s round, and the same phase again. With both cores busy, 3 of 24 joins
// took 2-4 rounds (0 of 24 without the setting); CI missed a 45 s bound.
// librdkafka's default interval is 5 minutes.
TEST_CASE("a replica alone in its group joins in one round") {
  Cluster c;
  for (const char* group : {"tainter-a", "tainter-b", "tainter-c"}) {
    CAPTURE(group);
    c.kafka.CountJoinGroups();
    Replica r(c.kafka, c.api, c.clock, {}, group);
    REQUIRE(RunUntil({&r}, [&] { return r.consumer->assigned_partitions() == 4; }));
    CHECK(c.kafka.JoinGroupRequests() == 1);
  }
}

TEST_CASE("a poison message goes to the dead-letter topic and its partition moves on") {
  Cluster c;
  Replica r(c.kafka, c.api, c.clock);
  c.kafka.Produce("gpu-2", "{not json");
  c.kafka.Produce("gpu-2", R"({"schema":99,"id":"x"})");
  c.kafka.Produce(Event(c.clock, "gpu-2"));  // same key: same partition, after the poison
  REQUIRE(RunUntil({&r}, [&] { return c.api.HasTaint("gpu-2", kKey); }));
  CHECK(r.metrics.CounterValue("faultline_tainter_dead_lettered_total") == 2);
  REQUIRE(RunUntil({&r}, [&] {
    r.consumer->Commit(true);
    auto offs = KafkaEventConsumerTesting::CommittedOffsets(*r.consumer);
    std::int64_t sum = 0;
    for (const auto& [p, off] : offs) sum += off;
    return sum == 3;
  }));
  auto dead = c.kafka.ReadDeadLetters(2);
  REQUIRE(dead.size() == 2);
  CHECK(dead[0].value == "{not json");
  CHECK(dead[0].key == "gpu-2");
  CHECK(dead[0].headers["faultline.dlq.reason"].find("invalid_argument") == 0);
  CHECK(dead[0].headers["faultline.dlq.topic"] == kTopic);
  CHECK(dead[0].headers["faultline.dlq.offset"] == "0");
  CHECK(dead[1].headers["faultline.dlq.reason"].find("failed_precondition") == 0);
  CHECK(dead[1].headers["faultline.dlq.offset"] == "1");
}

// The version the published schema file describes: the value of `schema`
// in its events (schema/faultline-event-v1.schema.json, properties.schema.const).
int PublishedSchemaVersion() {
  std::ifstream in(FL_SOURCE_DIR "/schema/faultline-event-v1.schema.json");
  nlohmann::json schema = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  REQUIRE(!schema.is_discarded());
  REQUIRE(schema["properties"]["schema"]["const"].is_number_integer());
  return schema["properties"]["schema"]["const"].get<int>();
}

TEST_CASE(
    "an event of the published schema's version is decided, and a later version is set aside") {
  const int version = PublishedSchemaVersion();
  CHECK(FaultEvent::kSchemaVersion == version);  // the agent writes what the file describes
  Cluster c;
  Replica r(c.kafka, c.api, c.clock);
  nlohmann::json future = ToJson(Event(c.clock, "gpu-3"));
  future["schema"] = version + 1;  // otherwise a valid event
  c.kafka.Produce("gpu-3", future.dump());
  nlohmann::json current = ToJson(Event(c.clock, "gpu-3"));
  current["schema"] = version;
  c.kafka.Produce("gpu-3", current.dump());
  REQUIRE(RunUntil({&r}, [&] { return c.api.HasTaint("gpu-3", kKey); }));
  CHECK(r.Decisions("taint") == 1);
  CHECK(r.metrics.CounterValue("faultline_tainter_dead_lettered_total") == 1);
  auto dead = c.kafka.ReadDeadLetters(1);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].value == future.dump());
  CHECK(dead[0].headers["faultline.dlq.reason"].find("failed_precondition") == 0);
  CHECK(dead[0].headers["faultline.dlq.reason"].find("schema " + std::to_string(version + 1)) !=
        std::string::npos);
}

TEST_CASE("a threshold window and adopted taints survive a tainter restart") {
  Cluster c;
  auto flap = [&](const std::string& node) {
    FaultEvent e = Event(c.clock, node, "ib.flap");
    e.threshold = EventThreshold{3, minutes(10), {}};
    return e;
  };
  Tainter::Options o;
  o.policy.max_fraction = 0.5;
  std::uint64_t writes_before = 0;
  std::size_t events_before = 0;
  {
    Replica first(c.kafka, c.api, c.clock, o);
    c.kafka.Produce(Event(c.clock, "gpu-1"));
    c.kafka.Produce(flap("gpu-7"));
    c.kafka.Produce(flap("gpu-7"));
    REQUIRE(RunUntil({&first}, [&] {
      return first.Decisions("below_threshold") == 2 && first.Decisions("taint") == 1 &&
             first.tainter->pending() == 0;
    }));
    first.consumer->Close();
    writes_before = c.api.writes();
    events_before = c.api.events().size();
  }
  CHECK_FALSE(c.api.HasTaint("gpu-7", kKey));
  REQUIRE(c.api.HasTaint("gpu-1", kKey));

  Replica second(c.kafka, c.api, c.clock, o);
  CHECK(second.tainter->policy().IsTainted("gpu-1"));  // adopted from the node
  REQUIRE(RunUntil({&second}, [&] {
    return second.metrics.CounterValue("faultline_tainter_replayed_events_total") == 3;
  }));
  // Nothing decided before the restart is decided again.
  CHECK(second.Decisions("taint") == 0);
  CHECK(c.api.writes() == writes_before);
  CHECK(c.api.events().size() == events_before);
  CHECK(c.api.HasTaint("gpu-1", kKey));
  // The third flap crosses the threshold with the two from before the restart.
  c.kafka.Produce(flap("gpu-7"));
  REQUIRE(RunUntil({&second}, [&] { return c.api.HasTaint("gpu-7", kKey); }));
  CHECK(second.Decisions("taint") == 1);
}

TEST_CASE(
    "through Kafka: the valve refuses past the limit while untaint works, and expiry "
    "lifts only faultline's taint") {
  Cluster c;  // 10 nodes: the valve allows 1
  c.api.MutateNode("gpu-1", [](NodeInfo& n) {
    n.taints.push_back({"node.kubernetes.io/not-ready", "", "NoSchedule", ""});
  });
  Replica r(c.kafka, c.api, c.clock);
  FaultEvent soft = Event(c.clock, "gpu-1", "nccl.timeout");
  soft.expire = minutes(30);
  c.kafka.Produce(soft);
  REQUIRE(RunUntil({&r}, [&] { return c.api.HasTaint("gpu-1", kKey); }));
  c.kafka.Produce(Event(c.clock, "gpu-2"));
  REQUIRE(RunUntil({&r}, [&] { return r.Decisions("refused_by_valve") == 1; }));
  CHECK(c.api.HasTaint("gpu-1", kKey));
  CHECK_FALSE(c.api.HasTaint("gpu-2", kKey));
  REQUIRE(c.api.EventsFor("gpu-2").size() == 1);
  CHECK(c.api.EventsFor("gpu-2")[0].reason == "FaultlineValveShut");

  // Expiry lifts gpu-1's taint, not the foreign one; the slot is free again.
  c.clock.Advance(minutes(31));
  REQUIRE(RunUntil({&r}, [&] { return !c.api.HasTaint("gpu-1", kKey); }));
  CHECK(c.api.HasTaint("gpu-1", "node.kubernetes.io/not-ready"));
  c.kafka.Produce(Event(c.clock, "gpu-2"));
  REQUIRE(RunUntil({&r}, [&] { return c.api.HasTaint("gpu-2", kKey); }));

  // Valve shut again (gpu-2 holds the one slot); untaint still works.
  c.kafka.Produce(Event(c.clock, "gpu-3"));
  REQUIRE(RunUntil({&r}, [&] { return r.Decisions("refused_by_valve") == 2; }));
  REQUIRE(r.tainter->Untaint("gpu-2", "replaced").ok());
  CHECK_FALSE(c.api.HasTaint("gpu-2", kKey));
}

TEST_CASE("two replicas in one group split the partitions and the nodes") {
  Cluster c;
  Tainter::Options o;
  o.policy.max_fraction = 1.0;
  o.policy.per_rule_max_fraction = 1.0;
  o.policy.max_new_taints = 0;
  Replica a(c.kafka, c.api, c.clock, o);
  Replica b(c.kafka, c.api, c.clock, o);
  // The join takes the same bound as every other test's (RunUntil's): the
  // mock coordinator waits 3 s for members, and a round can fail where a
  // real broker's would not. librdkafka 2.0's mock ends the sync as soon as
  // the leader's SyncGroup carries every assignment, then answers a
  // follower's later SyncGroup with INVALID_REQUEST (a real coordinator
  // hands it its assignment), and both rejoin: 3 s more per lost race.
  // Measured: 3-12 s, with up to three lost rounds in a row.
  REQUIRE(RunUntil({&a, &b}, [&] {
    return a.consumer->assigned_partitions() + b.consumer->assigned_partitions() == 4 &&
           a.consumer->assigned_partitions() > 0 && b.consumer->assigned_partitions() > 0;
  }));
  for (int i = 0; i < 10; ++i) c.kafka.Produce(Event(c.clock, "gpu-" + std::to_string(i)));
  REQUIRE(RunUntil({&a, &b}, [&] { return a.Decisions("taint") + b.Decisions("taint") == 10; }));
  CHECK(a.Decisions("taint") > 0);
  CHECK(b.Decisions("taint") > 0);
  for (int i = 0; i < 10; ++i) CHECK(c.api.HasTaint("gpu-" + std::to_string(i), kKey));
  CHECK(c.api.events().size() == 10);
}

// Issue 11.2: every replica ran expiry over every node it knew and rewrote
// the whole annotation from its own (stale) copy, so a non-owner erased a
// hardware reason the owner had just added. Only the owner of the node's
// partition decides for it, and writes re-read and merge.
TEST_CASE("only the owner of a node's partition expires its reasons, a non-owner erases nothing") {
  Cluster c;
  Replica a(c.kafka, c.api, c.clock);
  Replica b(c.kafka, c.api, c.clock);
  REQUIRE(RunUntil({&a, &b}, [&] {
    return a.consumer->assigned_partitions() > 0 && b.consumer->assigned_partitions() > 0 &&
           a.consumer->assigned_partitions() + b.consumer->assigned_partitions() == 4;
  }));
  auto rules = [&] {
    std::set<std::string> out;
    auto n = c.api.Node("gpu-1");
    auto it = n->annotations.find(kAnnotation);
    if (it == n->annotations.end()) return out;
    Result<std::vector<Reason>> reasons = DecodeReasons(it->second);
    REQUIRE(reasons.ok());
    for (const Reason& r : *reasons) out.insert(r.rule);
    return out;
  };
  FaultEvent soft1 = Event(c.clock, "gpu-1", "nccl.timeout");
  soft1.expire = minutes(30);
  FaultEvent soft2 = Event(c.clock, "gpu-1", "ib.flap");
  soft2.expire = hours(2);
  c.kafka.Produce(soft1);
  c.kafka.Produce(soft2);
  REQUIRE(RunUntil({&a, &b}, [&] { return rules().size() == 2; }));
  Replica& owner = a.metrics.CounterValue("faultline_tainter_events_total") == 2 ? a : b;
  Replica& other = &owner == &a ? b : a;
  REQUIRE(other.metrics.CounterValue("faultline_tainter_events_total") == 0);
  // The other replica reads the node (its resync): it now knows both reasons.
  REQUIRE(other.tainter->AdoptAll().ok());
  REQUIRE(other.tainter->policy().ActiveReasons("gpu-1").size() == 2);

  // The owner adds a hardware reason that never expires.
  c.kafka.Produce(Event(c.clock, "gpu-1", "nvidia.xid"));
  REQUIRE(RunUntil({&a, &b}, [&] { return rules().count("nvidia.xid") == 1; }));

  // soft1 lapses. The other replica ticks first: it must not touch the node.
  c.clock.Advance(minutes(31));
  other.Step();
  CHECK(rules() == std::set<std::string>{"ib.flap", "nccl.timeout", "nvidia.xid"});
  // The owner lapses soft1 and keeps the rest.
  REQUIRE(RunUntil({&other, &owner}, [&] { return rules().count("nccl.timeout") == 0; }));
  CHECK(rules() == std::set<std::string>{"ib.flap", "nvidia.xid"});
  CHECK(c.api.HasTaint("gpu-1", kKey));
}

// Issue 11.7: the key routes an event to its node's owner; an event whose key
// names another node is not decided.
TEST_CASE("an event whose key does not name its node is dead-lettered and counted, not decided") {
  Cluster c;
  Replica r(c.kafka, c.api, c.clock);
  FaultEvent forged = Event(c.clock, "gpu-3");
  c.kafka.Produce("gpu-2", SerializeFaultEvent(forged));
  REQUIRE(RunUntil({&r}, [&] {
    return r.metrics.CounterValue("faultline_tainter_events_set_aside_total",
                                  {{"why", "key_mismatch"}}) == 1;
  }));
  std::vector<MockKafka::DeadLetter> dead = c.kafka.ReadDeadLetters(1);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0].key == "gpu-2");
  CHECK(dead[0].headers["faultline.dlq.reason"].find("does not match node 'gpu-3'") !=
        std::string::npos);
  CHECK_FALSE(c.api.HasTaint("gpu-3", kKey));
  CHECK_FALSE(c.api.HasTaint("gpu-2", kKey));
  CHECK(r.metrics.CounterValue("faultline_tainter_events_total") == 0);
}

// The property a later entry sets wins (librdkafka's conf->set overwrites).
std::string Effective(const std::vector<std::pair<std::string, std::string>>& props,
                      const std::string& key) {
  std::string value;
  for (const auto& [k, v] : props) {
    if (k == key) value = v;
  }
  return value;
}

TEST_CASE(
    "the consumer holds an empty fetch 50 ms by default (not 500), a configured property wins, "
    "and offsets stay manual") {
  // librdkafka's mock cluster answers an empty fetch only after the whole
  // fetch.wait.max.ms (a real broker answers once fetch.min.bytes arrived):
  // with librdkafka's default of 500 ms, bench/latency measured a p99 of
  // 480-810 ms through Kafka; with 50 ms, 61 ms.
  KafkaEventConsumer::Options o;
  o.brokers = "127.0.0.1:9092";
  CHECK(Effective(KafkaEventConsumer::ConsumerProperties(o), "fetch.wait.max.ms") == "50");
  CHECK(Effective(KafkaEventConsumer::ConsumerProperties(o), "fetch.error.backoff.ms") == "100");
  o.properties = {{"fetch.wait.max.ms", "500"}, {"enable.auto.commit", "true"}};
  const auto props = KafkaEventConsumer::ConsumerProperties(o);
  CHECK(Effective(props, "fetch.wait.max.ms") == "500");
  CHECK(Effective(props, "enable.auto.commit") == "false");
  CHECK(Effective(props, "enable.auto.offset.store") == "false");
}

}  // namespace
}  // namespace faultline
