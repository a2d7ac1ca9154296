// SPDX-License-Identifier: Apache-2.0
// The agent's `checks:` section, and what it opens.
#include "collector/checks/checks_config.h"

#include <doctest/doctest.h>

#include "collector/agent/agent_config.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> Errors(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.all()) {
    out.push_back(std::to_string(d.where.line) + ":" + std::to_string(d.where.column) + " " +
                  d.code + " " + d.message);
  }
  return out;
}

TEST_CASE("checks: every key is read") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  concurrency: 3
  jitter: 1s
  repeat: 10m
  sysfs_root: /host/sys
  procfs_root: /host/proc
  nvidia_driver: {enabled: false, interval: 2m}
  gpu_inventory: {interval: 30s, timeout: 5s, expected: {nvidia: 8, amd: 0}}
  pcie: {enabled: false}
  aer: {interval: 2m}
  nvml: {library: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1, expected: 8, ecc_aggregate_max: 10,
         xid_events: false, xid_interval: 30s}
  env: {PATH: /usr/bin, LANG: C}
  working_dir: /etc/faultline/plugins
  exec:
    - {name: nhc, path: /usr/sbin/nhc, args: [-t, '30'], interval: 5m, timeout: 1m, max_output_length: 200}
  npd: {configs: [/etc/npd/gpu.json]}
)",
                            "a.yaml", diags);
  REQUIRE_MESSAGE(c.has_value(), Errors(diags).front());
  const ChecksConfig& k = c->checks;
  CHECK(k.enabled);
  CHECK(k.concurrency == 3);
  CHECK(k.jitter == milliseconds(1000));
  CHECK(k.repeat == milliseconds(600'000));
  CHECK(k.sysfs_root == "/host/sys");
  CHECK(k.procfs_root == "/host/proc");
  CHECK_FALSE(k.nvidia_driver_enabled);
  CHECK(k.nvidia_driver.interval == milliseconds(120'000));
  CHECK(k.gpu_inventory.interval == milliseconds(30'000));
  CHECK(k.gpu_inventory.timeout == milliseconds(5000));
  CHECK(k.gpu_expected == std::map<std::string, int>{{"amd", 0}, {"nvidia", 8}});
  CHECK_FALSE(k.pcie_enabled);
  CHECK(k.aer.interval == milliseconds(120'000));
  CHECK(k.nvml_library == "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  CHECK(k.nvml_expected == 8);
  CHECK(k.nvml_ecc_aggregate_max == 10);
  CHECK_FALSE(k.nvml_xid_enabled);
  CHECK(k.nvml_xid.interval == milliseconds(30'000));
  CHECK(ChecksConfig().nvml_xid_enabled);
  CHECK(ChecksConfig().nvml_xid.interval == milliseconds(10'000));
  CHECK(k.exec_env == std::map<std::string, std::string>{{"LANG", "C"}, {"PATH", "/usr/bin"}});
  CHECK(k.exec_working_dir == "/etc/faultline/plugins");
  REQUIRE(k.exec.size() == 1);
  CHECK(k.exec[0].args == std::vector<std::string>{"-t", "30"});
  CHECK(k.exec[0].max_output_length == 200);
  CHECK(k.npd_configs == std::vector<std::string>{"/etc/npd/gpu.json"});
}

TEST_CASE("checks: mistakes are reported at their place") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  gpu_inventory: {expected: {nvidea: 8}}
  nvml: {intervall: 1m}
  exec: [{path: /x}]
)",
                            "a.yaml", diags);
  CHECK_FALSE(c.has_value());
  const std::vector<std::string> errors = Errors(diags);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].find("C003 'checks.gpu_inventory.expected' has unknown kind 'nvidea'") !=
        std::string::npos);
  CHECK(errors[1].find("C002") != std::string::npos);
  CHECK(errors[1].find("intervall") != std::string::npos);
  CHECK(errors[2].find("C004 a checks.exec entry needs a name and a path") != std::string::npos);
}

TEST_CASE("a file source cannot claim the check origin") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
sources:
  file: [{path: /tmp/x.log, origin: check}]
)",
                            "a.yaml", diags);
  CHECK_FALSE(c.has_value());
  REQUIRE(diags.all().size() == 1);
  CHECK(diags.all()[0].message.find("only the checks make check records") != std::string::npos);
}

TEST_CASE("the default config's checks section parses back to the defaults") {
  Diagnostics diags;
  auto c = ParseAgentConfig(DefaultAgentConfigYaml() + "node_name: n\n", "default.yaml", diags);
  // kafka.brokers is empty in the defaults: the one expected error.
  REQUIRE(diags.all().size() == 1);
  CHECK(diags.all()[0].message.find("kafka.brokers is required") == 0);
  (void)c;
}

TEST_CASE("checks.dcgm and checks.amd_ras: defaults, keys read, a URL not http(s) refused") {
  CHECK_FALSE(ChecksConfig().dcgm_enabled);
  CHECK(ChecksConfig().dcgm_url == "http://localhost:9400/metrics");
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  dcgm: {enabled: true, url: 'http://127.0.0.1:9500/metrics', interval: 30s, timeout: 4s}
  amd_ras: {enabled: false, interval: 2m}
)",
                            "a.yaml", diags);
  REQUIRE_MESSAGE(c.has_value(), Errors(diags).front());
  CHECK(c->checks.dcgm_enabled);
  CHECK(c->checks.dcgm_url == "http://127.0.0.1:9500/metrics");
  CHECK(c->checks.dcgm.interval == milliseconds(30'000));
  CHECK(c->checks.dcgm.timeout == milliseconds(4000));
  CHECK_FALSE(c->checks.amd_ras_enabled);
  CHECK(c->checks.amd_ras.interval == milliseconds(120'000));
  CHECK(ChecksConfig().amd_ras_enabled);

  Diagnostics bad;
  auto b = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  dcgm: {enabled: true, url: 'file:///etc/shadow'}
)",
                            "b.yaml", bad);
  CHECK_FALSE(b.has_value());
  const std::vector<std::string> errors = Errors(bad);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("C003 'checks.dcgm.url' must be an http:// or https:// URL") !=
        std::string::npos);

  // Only the dcgm-exporter check: the source exists (the exporter need not
  // be up at start: an unreachable one is an error record per run).
  ChecksConfig only;
  only.gpu_inventory_enabled = only.pcie_enabled = only.aer_enabled = false;
  only.nvidia_driver_enabled = only.nvml_enabled = false;
  only.dcgm_enabled = true;
  auto source = OpenCheckSource(only, RealClock());
  REQUIRE(source.ok());
  CHECK(*source != nullptr);
}

TEST_CASE("checks.gpu_inventory.expected_labels: a node label gives the expected count") {
  Diagnostics diags;
  auto c = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  gpu_inventory: {expected: {amd: 4}, expected_labels: {nvidia: nvidia.com/gpu.count, amd: amd.com/gpu.count}}
)",
                            "a.yaml", diags);
  REQUIRE_MESSAGE(c.has_value(), Errors(diags).front());
  ChecksConfig k = c->checks;
  CHECK(k.gpu_expected_labels ==
        std::map<std::string, std::string>{{"amd", "amd.com/gpu.count"},
                                           {"nvidia", "nvidia.com/gpu.count"}});
  CHECK_FALSE(k.node_labels_applied);

  SUBCASE("the label sets the count; the config's own count wins") {
    ApplyNodeLabels({{"nvidia.com/gpu.count", "8"}, {"amd.com/gpu.count", "8"}}, k);
    CHECK(k.node_labels_applied);
    CHECK(k.gpu_expected == std::map<std::string, int>{{"amd", 4}, {"nvidia", 8}});
    CHECK(k.nvml_expected == 8);
  }
  SUBCASE("nvml.expected set in the config stays") {
    k.nvml_expected = 4;
    ApplyNodeLabels({{"nvidia.com/gpu.count", "8"}}, k);
    CHECK(k.gpu_expected.at("nvidia") == 8);
    CHECK(k.nvml_expected == 4);
  }
  SUBCASE("absent or not a count: the baseline") {
    ApplyNodeLabels({{"nvidia.com/gpu.present", "true"}}, k);
    CHECK(k.gpu_expected.count("nvidia") == 0);
    ApplyNodeLabels({{"nvidia.com/gpu.count", "eight"}}, k);
    CHECK(k.gpu_expected.count("nvidia") == 0);
    ApplyNodeLabels({{"nvidia.com/gpu.count", "-1"}}, k);
    CHECK(k.gpu_expected.count("nvidia") == 0);
    CHECK_FALSE(k.nvml_expected.has_value());
  }

  Diagnostics bad;
  auto b = ParseAgentConfig(R"(node_name: n
kafka: {brokers: 'k:9092'}
checks:
  gpu_inventory: {expected_labels: {nvidea: nvidia.com/gpu.count}}
)",
                            "b.yaml", bad);
  CHECK_FALSE(b.has_value());
  const std::vector<std::string> errors = Errors(bad);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("C003 'checks.gpu_inventory.expected_labels' has unknown kind 'nvidea'") !=
        std::string::npos);
}

TEST_CASE("OpenCheckSource: nothing enabled, no NVML, a bad NPD config") {
  ChecksConfig off;
  off.enabled = false;
  auto none = OpenCheckSource(off, RealClock());
  REQUIRE(none.ok());
  CHECK(*none == nullptr);

  ChecksConfig c;
  c.nvml_library = "/nonexistent/libnvidia-ml.so.1";  // logged, skipped
  auto source = OpenCheckSource(c, RealClock());
  REQUIRE(source.ok());
  CHECK(*source != nullptr);

  TempDir dir;
  c.npd_configs = {dir.Write("bad.json", R"({"plugin": "custom", "source": "x", "rules": []})")};
  auto bad = OpenCheckSource(c, RealClock());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == dir.path().string() + "/bad.json: no rules");
  c.npd_configs = {dir.path().string() + "/missing.json"};
  CHECK_FALSE(OpenCheckSource(c, RealClock()).ok());
}

}  // namespace
}  // namespace faultline
