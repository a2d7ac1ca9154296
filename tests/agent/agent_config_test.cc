// SPDX-License-Identifier: Apache-2.0
// faultline-agent's config: defaults, every key read, errors at their place.
#include "collector/agent/agent_config.h"

#include <algorithm>

#include <doctest/doctest.h>

#include "collector/agent/pipeline.h"

namespace faultline {
namespace {

std::vector<std::string> Errors(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.all()) {
    out.push_back(std::to_string(d.where.line) + ":" + std::to_string(d.where.column) + " " +
                  d.code);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("a minimal config takes every default") {
  Diagnostics diags;
  auto c = ParseAgentConfig("node_name: n1\nkafka: {brokers: 'k:9092'}\n", "a.yaml", diags);
  REQUIRE(c.has_value());
  CHECK(c->node_name == "n1");
  CHECK(c->state_dir == "/var/lib/faultline");
  CHECK(c->suppression_window == std::chrono::seconds(60));
  CHECK(c->shutdown_grace == std::chrono::seconds(25));
  CHECK(c->rules.builtin);
  CHECK(c->kmsg_enabled);
  CHECK_FALSE(c->journal_enabled);
  CHECK(c->journal.skip_kernel_transport);  // kmsg is on: kernel lines come from there
  CHECK(c->kafka.topic == "faultline.events");
  CHECK(c->kafka.message_timeout.count() == 0);
  CHECK(c->kmsg.state_dir == "/var/lib/faultline");
}

TEST_CASE("every documented key is read") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: gpu-9
state_dir: /tmp/s
log_level: debug
metrics_address: 127.0.0.1:0
shutdown_grace: 5s
suppression_window: 10s
suppression_max_folded: 50
suppression_flush_records: 400
checkpoint_interval: 2s
queue: {max_batch_records: 10, max_queued_batches: 2, max_uncommitted_records: 1000}
rules: {builtin: false, paths: [/etc/rules, /x.yaml], reload_debounce: 1s}
sources:
  kmsg: {enabled: false, path: /tmp/kmsg, start: end}
  journal: {enabled: true, directory: /j, units: [kubelet.service], start: tail}
  podlog: {enabled: true, root: /pods, exclude_namespaces: [kube-system]}
  ibcounters: {enabled: true, sysfs_root: /fake, interval: 3s}
  file:
    - {path: /var/log/a.log, follow: false, origin: pod}
kafka:
  brokers: a:1,b:2
  topic: t
  message_timeout: 2m
  queue_max_messages: 10
  compression: zstd
  linger: 1ms
  properties: {security.protocol: SASL_SSL, sasl.mechanism: PLAIN}
)",
                            "full.yaml", diags);
  REQUIRE(c.has_value());
  CHECK(c->log_level == LogLevel::kDebug);
  CHECK(c->max_uncommitted_records == 1000);
  CHECK(c->suppression_flush_records == 400);
  CHECK(c->rules.paths == std::vector<std::string>{"/etc/rules", "/x.yaml"});
  CHECK_FALSE(c->kmsg_enabled);
  CHECK(c->kmsg.start_policy == KmsgSource::StartPolicy::kEnd);
  CHECK(c->journal.units == std::vector<std::string>{"kubelet.service"});
  CHECK(c->journal.start == JournalSource::Start::kTail);
  CHECK_FALSE(c->journal.skip_kernel_transport);
  CHECK(c->podlog.exclude_namespaces == std::vector<std::string>{"kube-system"});
  CHECK(c->ibcounters_enabled);
  CHECK(c->ibcounters.interval == std::chrono::seconds(3));
  REQUIRE(c->files.size() == 1);
  CHECK_FALSE(c->files[0].follow);
  CHECK(c->files[0].origin == Origin::kPod);
  CHECK(c->kafka.message_timeout == std::chrono::minutes(2));
  CHECK(c->kafka.compression == "zstd");
  CHECK(c->kafka.properties.at("sasl.mechanism") == "PLAIN");
}

TEST_CASE("config errors are all reported, each at its line and column") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
suppression_window: soon
kafka:
  brokers: k:1
  compresion: lz4
sources:
  kmsg: {enabled: maybe}
  file:
    - {follow: true}
)",
                            "bad.yaml", diags);
  CHECK_FALSE(c.has_value());
  // Sorted by place; all four in one run.
  CHECK(Errors(diags) ==
        std::vector<std::string>{"2:21 C003", "5:3 C002", "7:19 C003", "9:7 C004"});
}

// Records held behind an open window past max_uncommitted_records would stop
// the reader until the window ends (issue 12, item 5).
TEST_CASE("suppression_flush_records must be below max_uncommitted_records") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
suppression_max_folded: 10
suppression_flush_records: 1000
queue: {max_uncommitted_records: 1000}
kafka: {brokers: k:1}
)",
                            "flush.yaml", diags);
  CHECK_FALSE(c.has_value());
  REQUIRE(diags.all().size() == 1);
  CHECK(diags.all()[0].code == "C003");
  CHECK(diags.all()[0].message.find("suppression_flush_records (1000) must be below "
                                    "queue.max_uncommitted_records (1000)") != std::string::npos);

  // Unset, it follows a smaller max_uncommitted_records down: a config
  // written before the key existed still loads.
  Diagnostics older;
  auto halved = ParseAgentConfig(R"(node_name: n
suppression_max_folded: 10
queue: {max_uncommitted_records: 1000}
kafka: {brokers: k:1}
)",
                                 "flush.yaml", older);
  REQUIRE(halved.has_value());
  CHECK(halved->suppression_flush_records == 500);

  Diagnostics fine;
  CHECK(ParseAgentConfig(R"(node_name: n
suppression_max_folded: 10
suppression_flush_records: 999
queue: {max_uncommitted_records: 1000}
kafka: {brokers: k:1}
)",
                         "flush.yaml", fine)
            .has_value());
}

TEST_CASE("a YAML syntax error is reported at its place, and brokers are required") {
  Diagnostics diags;
  CHECK_FALSE(ParseAgentConfig("kafka: [unclosed\n", "s.yaml", diags).has_value());
  REQUIRE(diags.all().size() == 1);
  CHECK(diags.all()[0].code == "C001");
  CHECK(diags.all()[0].where.line >= 1);

  Diagnostics missing;
  CHECK_FALSE(ParseAgentConfig("node_name: n\n", "m.yaml", missing).has_value());
  REQUIRE(missing.all().size() == 1);
  CHECK(missing.all()[0].code == "C004");
}

// Issue 11.10: a file source without `origin` was `any` (every rule applies).
TEST_CASE("a file source without an origin reads pod lines, the least trusted") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
sources:
  file:
    - {path: /var/log/app.log}
kafka: {brokers: k:1}
)",
                            "file.yaml", diags);
  REQUIRE(c.has_value());
  REQUIRE(c->files.size() == 1);
  CHECK(c->files[0].origin == Origin::kPod);
}

TEST_CASE("the printed default config parses to the defaults once brokers are set") {
  std::string text = DefaultAgentConfigYaml();
  const std::string from = "brokers: \"\"";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "brokers: \"k:1\"");
  text.replace(text.find("node_name: \"\""), 13, "node_name: x");
  Diagnostics diags;
  auto c = ParseAgentConfig(text, "default.yaml", diags);
  REQUIRE(c.has_value());
  CHECK(c->suppression_max_folded == AgentConfig().suppression_max_folded);
  CHECK(c->suppression_flush_records == AgentConfig().suppression_flush_records);
  CHECK(c->suppression_flush_records == Pipeline::Options().suppression_flush_records);
  CHECK(c->podlog.max_line_bytes == PodLogSource::Options().max_line_bytes);
  CHECK(c->ibcounters.sysfs_root == IbCountersSource::Options().sysfs_root);
  CHECK(c->identity_enabled);
  CHECK(c->identity.topic == IdentityPublisher::Options().topic);
  CHECK(c->identity.interval == IdentityPublisher::Options().interval);
}

}  // namespace
}  // namespace faultline
