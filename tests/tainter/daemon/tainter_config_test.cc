// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/tainter_config.h"

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

TEST_CASE("an empty config file means every default") {
  Result<TainterConfig> c = ParseTainterConfig("", "t.yaml");
  REQUIRE(c.ok());
  CHECK(c->kafka.topic == "faultline.events");
  CHECK(c->kafka.group == "faultline-tainter");
  CHECK(c->tainter.taint.key == "faultline.dev/faulty");
  CHECK(c->tainter.taint.value == "true");
  CHECK(c->tainter.taint.effect == "NoSchedule");
  CHECK(c->tainter.annotation_key == "faultline.dev/reasons");
  CHECK(c->tainter.opt_out_label == "faultline.dev/opt-out=true");
  CHECK(c->tainter.policy.max_fraction == doctest::Approx(0.10));
  CHECK(c->tainter.policy.max_new_taints == 5);
  CHECK(c->tainter.policy.new_taint_window == std::chrono::minutes(10));
  CHECK_FALSE(c->tainter.dry_run);
  CHECK(c->metrics_address == "0.0.0.0:9400");  // the manifests' container port
}

TEST_CASE("pod_events: on by default with a bound of 50, both keys read, max_pods at least 1") {
  Result<TainterConfig> d = ParseTainterConfig("", "t.yaml");
  REQUIRE(d.ok());
  CHECK(d->tainter.pod_events.enabled);
  CHECK(d->tainter.pod_events.max_pods == 50);
  Result<TainterConfig> c =
      ParseTainterConfig("pod_events: {enabled: false, max_pods: 7}\n", "t.yaml");
  REQUIRE(c.ok());
  CHECK_FALSE(c->tainter.pod_events.enabled);
  CHECK(c->tainter.pod_events.max_pods == 7);
  CHECK_FALSE(ParseTainterConfig("pod_events: {max_pods: 0}\n", "t.yaml").ok());
  CHECK_FALSE(ParseTainterConfig("pod_events: {per_node: 3}\n", "t.yaml").ok());
  // Per-node pod lists a minute before a storm's taints share one listing.
  CHECK(d->tainter.pod_events.node_lists_per_minute == 6);
  Result<TainterConfig> n =
      ParseTainterConfig("pod_events: {node_lists_per_minute: 0}\n", "t.yaml");
  REQUIRE(n.ok());
  CHECK(n->tainter.pod_events.node_lists_per_minute == 0);
  CHECK_FALSE(ParseTainterConfig("pod_events: {node_lists_per_minute: -1}\n", "t.yaml").ok());
}

TEST_CASE("every documented key is read") {
  Result<TainterConfig> c = ParseTainterConfig(R"yaml(
kafka:
  brokers: k1:9092,k2:9092
  topic: ev
  group: g
  dead_letter_topic: dlq
  rebuild_span: 6h
  rebuild_max_messages: 500
  properties:
    security.protocol: SASL_SSL
    sasl.mechanism: PLAIN
kubernetes:
  kubeconfig: /etc/kube.yaml
  context: prod
  qps: 20
  burst: 40
  request_timeout: 5s
taint: {key: trainy.konduktor.ai/faulty, value: "true", effect: NoExecute}
annotation: example.com/reasons
max_annotation_bytes: 8192
node_selector: gpu=true,!spot
opt_out_label: example.com/skip=yes
valve:
  max_fraction: 0.05
  per_rule_max_fraction: 0.02
  min_allowed: 0
  max_new_taints: 3
  window: 30m
  event_interval: 1h
  refusal_events_per_minute: 4
dedupe: {capacity: 1000, ttl: 12h}
resync_interval: 2m
max_pending: 77
dry_run: true
metrics_address: 127.0.0.1:0
log_level: debug
)yaml",
                                               "t.yaml");
  REQUIRE_MESSAGE(c.ok(), c.error().message());
  CHECK(c->kafka.brokers == "k1:9092,k2:9092");
  CHECK(c->kafka.rebuild_span == std::chrono::hours(6));
  CHECK(c->kafka.rebuild_max_messages == 500);
  CHECK(c->kafka.properties.at("security.protocol") == "SASL_SSL");
  CHECK(c->kubernetes.context == "prod");
  CHECK(c->kubernetes.request_timeout == std::chrono::seconds(5));
  CHECK(c->tainter.taint.key == "trainy.konduktor.ai/faulty");
  CHECK(c->tainter.taint.effect == "NoExecute");
  CHECK(c->tainter.max_annotation_bytes == 8192);
  CHECK(c->tainter.node_selector == "gpu=true,!spot");
  CHECK(c->tainter.policy.per_rule_max_fraction == doctest::Approx(0.02));
  CHECK(c->tainter.policy.min_allowed == 0);
  CHECK(c->tainter.policy.new_taint_window == std::chrono::minutes(30));
  CHECK(c->tainter.policy.refusal_events_per_minute == 4);
  CHECK(c->tainter.policy.dedupe_capacity == 1000);
  CHECK(c->tainter.max_pending == 77);
  CHECK(c->tainter.dry_run);
  CHECK(c->log_level == LogLevel::kDebug);
}

TEST_CASE("config errors name file, line and column, all of them in one run") {
  Result<TainterConfig> c = ParseTainterConfig(
      "kafka:\n  brokers: x\n  bogus: 1\nvalve:\n  max_fraction: 2\nnode_selector: 'a in (b)'\n",
      "bad.yaml");
  REQUIRE_FALSE(c.ok());
  const std::string& m = c.error().message();
  CHECK(m.find("bad.yaml:3:3: error: unknown key 'kafka.bogus'") != std::string::npos);
  CHECK(m.find("bad.yaml:5:17: error: 'valve.max_fraction' must be a number between 0 and 1") !=
        std::string::npos);
  CHECK(m.find("bad.yaml:6:16: error: 'node_selector'") != std::string::npos);
  Result<TainterConfig> broken = ParseTainterConfig("kafka: [\n", "broken.yaml");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message().find("broken.yaml:") == 0);
}

}  // namespace
}  // namespace faultline

namespace faultline {
namespace {

// Runs `command`, returning its exit status and what it wrote (stderr folded in).
std::pair<int, std::string> Run(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_CASE("faultline-tainter exits 2 with file:line:col errors on a bad config, before starting") {
  TempDir dir;
  const std::string bad =
      dir.Write("bad.yaml", "kafka:\n  brokers: 127.0.0.1:1\nvalve:\n  window: soon\n");
  auto [code, out] = Run(std::string(FL_BINARY_DIR) + "/tainter/faultline-tainter --config " + bad);
  CHECK(code == 2);
  CHECK(out.find(bad + ":4:11: error: 'valve.window' must be a duration") != std::string::npos);
  auto [usage_code, usage] = Run(std::string(FL_BINARY_DIR) + "/tainter/faultline-tainter --bogus");
  CHECK(usage_code == 2);
  CHECK(usage.find("usage: faultline-tainter") != std::string::npos);
  const std::string no_brokers = dir.Write("nob.yaml", "dry_run: true\n");
  auto [nb_code, nb] =
      Run(std::string(FL_BINARY_DIR) + "/tainter/faultline-tainter --config " + no_brokers);
  CHECK(nb_code == 2);
  CHECK(nb.find("'kafka.brokers' is required") != std::string::npos);
}

}  // namespace
}  // namespace faultline
