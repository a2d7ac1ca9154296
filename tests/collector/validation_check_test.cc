// SPDX-License-Identifier: Apache-2.0
// A validation command (`checks.exec[].validation: true`, issue 28): read from
// the agent's config, run as the agent runs it, until it passes once after
// the boot, and counted in the check rounds the tainter needs before it
// returns a rebooted node to service.
#include <sys/stat.h>

#include <fstream>

#include <doctest/doctest.h>

#include "collector/agent/agent_config.h"
#include "collector/checks/checks_config.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

std::string Messages(const Diagnostics& diags) {
  std::string out;
  for (const Diagnostic& d : diags.all()) out += d.code + " " + d.message + "\n";
  return out;
}

int Lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_CASE("a validation command runs until it passes once, and the rounds wait for it") {
  TempDir dir;
  // Fails its first two runs (a diag that finds a fault), then passes.
  const std::string script = dir.Write("diag.sh",
                                       "#!/bin/sh\n"
                                       "echo run >>" +
                                           dir / "runs" +
                                           "\n"
                                           "if [ \"$(wc -l <" +
                                           dir / "runs" +
                                           ")\" -lt 3 ]; then\n"
                                           "  echo 'diag level 2: memory test failed'; exit 1\n"
                                           "fi\n"
                                           "echo 'diag level 2 passed'\n");
  REQUIRE(chmod(script.c_str(), 0755) == 0);
  Diagnostics diags;
  auto config = ParseAgentConfig(
      "node_name: n\n"
      "kafka: {brokers: 'k:9092'}\n"
      "checks:\n"
      "  jitter: 0s\n"
      "  gpu_inventory: {enabled: false}\n"
      "  pcie: {enabled: false}\n"
      "  aer: {enabled: false}\n"
      "  nvidia_driver: {enabled: false}\n"
      "  amd_ras: {enabled: false}\n"
      "  nvml: {enabled: false}\n"
      "  exec:\n"
      "    - {name: dcgm-diag, path: " +
          script + ", interval: 50ms, timeout: 5s, validation: true}\n",
      "agent.yaml", diags);
  REQUIRE_MESSAGE(config.has_value(), Messages(diags));
  REQUIRE(config->checks.exec.size() == 1);
  CHECK(config->checks.exec[0].validation);
  auto source = OpenCheckSource(config->checks, RealClock());
  REQUIRE(source.ok());
  REQUIRE(*source != nullptr);

  std::vector<LogRecord> rounds;
  const auto until = std::chrono::steady_clock::now() + milliseconds(10'000);
  while (rounds.size() < 2 && std::chrono::steady_clock::now() < until) {
    for (LogRecord& r : ReadChecks(**source, 1, milliseconds(200))) {
      if (r.labels.at("check") == "round") rounds.push_back(std::move(r));
    }
  }
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0].labels.at("status") == "fail");
  CHECK(rounds[0].labels.at("failed") == "dcgm-diag");
  CHECK(rounds[0].text.find("msg=dcgm-diag: diag level 2: memory test failed") !=
        std::string::npos);
  CHECK(rounds[1].labels.at("status") == "ok");
  // Passed once (its third run): never run again.
  // (Checks start only while the source is read: read for ten intervals.)
  (void)ReadChecks(**source, 100, milliseconds(500));
  CHECK(Lines(dir / "runs") == 3);
}

TEST_CASE("a validation key that is not a boolean is an error") {
  Diagnostics diags;
  auto config = ParseAgentConfig(
      "node_name: n\n"
      "kafka: {brokers: 'k:9092'}\n"
      "checks:\n"
      "  exec: [{name: d, path: /bin/true, validation: sometimes}]\n",
      "agent.yaml", diags);
  CHECK_FALSE(config.has_value());
  CHECK(Messages(diags).find("validation") != std::string::npos);
}

}  // namespace
}  // namespace faultline
