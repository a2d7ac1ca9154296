// SPDX-License-Identifier: Apache-2.0
// `actuator:` and `slurm:` in faultline-tainter's config: the keys, their
// defaults, and the mistakes that must stop the tainter before it starts.
#include <string>

#include <doctest/doctest.h>

#include "tainter/daemon/tainter_config.h"

namespace faultline {
namespace {

TEST_CASE("actuator: kubernetes unless the config says slurm, with the slurm section read") {
  Result<TainterConfig> plain = ParseTainterConfig("kafka: {brokers: b:9092}\n", "t.yaml");
  REQUIRE(plain);
  CHECK(plain->actuator == "kubernetes");
  Result<TainterConfig> c = ParseTainterConfig(R"(actuator: slurm
slurm:
  scontrol: /usr/bin/scontrol
  slurm_conf: /etc/slurm/slurm.conf
  timeout: 4s
  reason_prefix: "fl:"
  reason_max_bytes: 64
  node_name_pattern: "{name}-ib"
  node_names: {odd: gpu099}
  valve_record: /shared/valve
  poll_interval: 3s
)",
                                               "t.yaml");
  REQUIRE(c);
  CHECK(c->actuator == "slurm");
  CHECK(c->slurm.scontrol == "/usr/bin/scontrol");
  CHECK(c->slurm.slurm_conf == "/etc/slurm/slurm.conf");
  CHECK(c->slurm.timeout == std::chrono::seconds(4));
  CHECK(c->slurm.reason_prefix == "fl:");
  CHECK(c->slurm.reason_max_bytes == 64);
  CHECK(c->slurm.node_name_pattern == "{name}-ib");
  CHECK(c->slurm.node_names.at("odd") == "gpu099");
  CHECK(c->slurm.valve_record == "/shared/valve");
  CHECK(c->slurm.poll_interval == std::chrono::seconds(3));
  // Off unless asked for.
  CHECK(c->slurm.job_action == SlurmSettings::JobAction::kNone);
  Result<TainterConfig> jobs = ParseTainterConfig(
      "actuator: slurm\nslurm: {jobs: {action: requeue, rules: [nvidia.xid]}}\n", "t.yaml");
  REQUIRE(jobs);
  CHECK(jobs->slurm.job_action == SlurmSettings::JobAction::kRequeue);
  CHECK(jobs->slurm.job_rules == std::vector<std::string>{"nvidia.xid"});
}

TEST_CASE("slurm config mistakes are errors with file, line and what to fix") {
  auto error_of = [](const std::string& yaml) {
    Result<TainterConfig> c = ParseTainterConfig(yaml, "t.yaml");
    return c ? std::string() : c.error().message();
  };
  CHECK(error_of("actuator: lsf\n").find("'actuator' must be kubernetes or slurm") !=
        std::string::npos);
  CHECK(error_of("actuator: slurm\nslurm: {node_name_pattern: gpu}\n").find("exactly once") !=
        std::string::npos);
  CHECK(error_of("actuator: slurm\nslurm: {reason_prefix: \"\"}\n").find("must not be empty") !=
        std::string::npos);
  CHECK(error_of("actuator: slurm\nslurm: {scontrl: x}\n").find("t.yaml:2:") !=
        std::string::npos);  // an unknown key, at its line
  CHECK(error_of("actuator: slurm\nslurm: {jobs: {action: kill}}\n")
            .find("must be none, requeue or cancel") != std::string::npos);
  CHECK(error_of("actuator: slurm\nremediation: {action: cordon}\n")
            .find("does not apply with 'actuator: slurm'") != std::string::npos);
}

}  // namespace
}  // namespace faultline
