// SPDX-License-Identifier: Apache-2.0
// The whole tainter path: Kafka (librdkafka's mock cluster) -> KafkaEventConsumer
// -> Tainter -> KubeNodeApi over HTTPS -> FakeApiServer (the test tree's
// Kubernetes API double, with resourceVersion semantics and a test CA).
#include <memory>
#include <string>

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <librdkafka/rdkafkacpp.h>

#include "base/fault_event.h"
#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/intake/event_consumer.h"
#include "tests/fakes/sample_event.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kKey[] = "faultline.dev/faulty";

bool HasTaint(const nlohmann::json& node, const std::string& key) {
  auto spec = node.find("spec");
  if (spec == node.end() || !spec->contains("taints")) return false;
  for (const auto& t : (*spec)["taints"]) {
    if (t.value("key", "") == key) return true;
  }
  return false;
}

TEST_CASE(
    "an event in Kafka taints the node through the API server over HTTPS, keeping a "
    "foreign taint written concurrently, and untaint removes only ours") {
  SetLogLevel(LogLevel::kWarning);
  KubeNodeApi::Options kopts;
  kopts.http.qps = 0;  // unlimited: the test measures behaviour, not pacing
  kopts.http.backoff_base = milliseconds(10);
  KubeFixture f(kopts);
  FakeApiServer& api_server = *f.server;
  for (int i = 0; i < 10; ++i) api_server.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
  api_server.AddForeignTaint("gpu-3", "node.kubernetes.io/not-ready", "", "NoSchedule");

  // Kafka: one broker, the events topic.
  char err[512];
  rd_kafka_conf_t* mconf = rd_kafka_conf_new();
  rd_kafka_conf_set(mconf, "log_level", "3", err, sizeof(err));
  rd_kafka_t* mrk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, err, sizeof(err));
  REQUIRE(mrk != nullptr);
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(mrk, 1);
  REQUIRE(mc != nullptr);
  REQUIRE(rd_kafka_mock_topic_create(mc, "events", 2, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  const std::string bootstraps = rd_kafka_mock_cluster_bootstraps(mc);

  FakeClock& clock = f.clock;
  MetricsRegistry& metrics = f.metrics;
  Tainter::Options topts;
  topts.node_selector = "gpu=true";
  auto tainter = Tainter::Create(topts, ApplierApis::All(f.Api()), metrics, clock);
  REQUIRE(tainter.ok());
  REQUIRE((*tainter)->AdoptAll().ok());
  CHECK((*tainter)->policy().managed_nodes() == 10);

  KafkaEventConsumer::Options copts;
  copts.brokers = bootstraps;
  copts.topic = "events";
  copts.dead_letter_topic = "events.dlq";
  copts.properties = {{"session.timeout.ms", "4000"}, {"heartbeat.interval.ms", "500"}};
  auto consumer = KafkaEventConsumer::Create(copts, **tainter, metrics, clock);
  REQUIRE(consumer.ok());
  REQUIRE((*consumer)->Start().ok());

  // Another controller taints gpu-3 between our read and our patch.
  api_server.BeforeNextNodeWrite([](FakeApiServer& s) {
    s.AddForeignTaint("gpu-3", "example.com/maintenance", "soon", "NoSchedule");
  });

  FaultEvent e =
      SampleEvent("gpu-3", MakeEventId("gpu-3", "kmsg", "boot:42", "nvidia.xid"), clock.Now());
  {
    std::unique_ptr<RdKafka::Conf> pconf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string perr;
    pconf->set("bootstrap.servers", bootstraps, perr);
    std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(pconf.get(), perr));
    REQUIRE(producer != nullptr);
    const std::string value = SerializeFaultEvent(e);
    // Stamped with the tainter's (fake) clock, as an agent's message is by
    // the same wall time in production: the consumer of a new group takes
    // messages older than its clock's rebuild span as history, and the fake
    // clock runs weeks ahead of the broker's.
    const std::int64_t stamp =
        std::chrono::duration_cast<milliseconds>(clock.Now().time_since_epoch()).count();
    REQUIRE(producer->produce("events", RdKafka::Topic::PARTITION_UA,
                              RdKafka::Producer::RK_MSG_COPY, const_cast<char*>(value.data()),
                              value.size(), e.node.data(), e.node.size(), stamp,
                              nullptr) == RdKafka::ERR_NO_ERROR);
    REQUIRE(producer->flush(5000) == RdKafka::ERR_NO_ERROR);
  }

  const auto deadline = std::chrono::steady_clock::now() + seconds(15);
  bool tainted = false;
  while (!tainted && std::chrono::steady_clock::now() < deadline) {
    (*consumer)->Poll(milliseconds(50));
    (*tainter)->Tick();
    (*consumer)->Commit();
    auto node = api_server.GetNodeJson("gpu-3");
    tainted = node && HasTaint(*node, kKey) && (*tainter)->pending() == 0;
  }
  REQUIRE(tainted);
  nlohmann::json node = *api_server.GetNodeJson("gpu-3");
  CHECK(HasTaint(node, "node.kubernetes.io/not-ready"));
  CHECK(HasTaint(node, "example.com/maintenance"));  // the concurrent write survived
  REQUIRE(node["metadata"]["annotations"].contains("faultline.dev/reasons"));
  auto reasons =
      DecodeReasons(node["metadata"]["annotations"]["faultline.dev/reasons"].get<std::string>());
  REQUIRE(reasons.ok());
  REQUIRE(reasons->size() == 1);
  CHECK((*reasons)[0].rule == "nvidia.xid");
  CHECK((*reasons)[0].event_id == e.id);
  bool warned = false;
  for (const nlohmann::json& ev : api_server.Events()) {
    if (ev.value("reason", "") == "FaultlineTainted" && ev.value("type", "") == "Warning" &&
        ev["involvedObject"].value("name", "") == "gpu-3") {
      warned = ev.value("message", "").find("Xid 79") != std::string::npos;
    }
  }
  CHECK(warned);

  REQUIRE((*tainter)->Untaint("gpu-3", "GPU reseated").ok());
  node = *api_server.GetNodeJson("gpu-3");
  CHECK_FALSE(HasTaint(node, kKey));
  CHECK(HasTaint(node, "node.kubernetes.io/not-ready"));
  CHECK(HasTaint(node, "example.com/maintenance"));
  CHECK_FALSE(node["metadata"]
                  .value("annotations", nlohmann::json::object())
                  .contains("faultline.dev/reasons"));

  (*consumer)->Close();
  consumer->reset();
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(mrk);
}

}  // namespace
}  // namespace faultline
