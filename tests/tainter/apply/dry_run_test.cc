// SPDX-License-Identifier: Apache-2.0
// The dry-run NodeApi shows every write a real run sends, the node
// condition patch on nodes/status included (issue 26).
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/log_testing.h"
#include "tainter/apply/dry_run_node_api.h"
#include "tainter/apply/node_applier.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_node_api.h"
#include "tests/fakes/sample_event.h"

namespace faultline {
namespace {

NodeCondition GpuFault() {
  return {"GPUFault", "True", "NvidiaXid", "Xid 79: GPU has fallen off the bus", "", ""};
}

TEST_CASE("dry run prints the node condition patch it would send, and sends nothing") {
  FakeClock clock;
  FakeNodeApi real;
  real.AddNode("gpu-1", {});
  std::ostringstream out;
  DryRunNodeApi dry({.out = &out, .metrics = nullptr, .only_node = "gpu-1", .events = {}}, clock,
                    &real);
  REQUIRE(dry.PatchNodeConditions("gpu-1", {GpuFault()}).ok());

  const std::string text = out.str();
  CHECK(text.find("would send: PATCH /api/v1/nodes/gpu-1/status  (Content-Type: "
                  "application/strategic-merge-patch+json)") != std::string::npos);
  CHECK(text.find("~ condition  GPUFault=True (NvidiaXid)") != std::string::npos);
  // The patch itself, as the real client sends it, indented below.
  const std::size_t open = text.find("    {");
  REQUIRE(open != std::string::npos);
  nlohmann::json patch = nlohmann::json::parse(text.substr(open), nullptr, false);
  REQUIRE(patch.is_object());
  REQUIRE(patch["status"]["conditions"].size() == 1);
  CHECK(patch["status"]["conditions"][0]["type"] == "GPUFault");
  CHECK(patch["status"]["conditions"][0]["status"] == "True");
  CHECK(patch["status"]["conditions"][0]["reason"] == "NvidiaXid");
  CHECK(dry.condition_patches() == 1);
  CHECK(real.writes() == 0);

  // The copy holds it (merged by type), so the next decision builds on it.
  Result<NodeInfo> copy = dry.GetNode("gpu-1");
  REQUIRE(copy.ok());
  REQUIRE(copy->conditions.size() == 1);
  CHECK(copy->conditions[0] == GpuFault());
  NodeCondition lifted = GpuFault();
  lifted.status = "False";
  REQUIRE(dry.PatchNodeConditions("gpu-1", {lifted}).ok());
  copy = dry.GetNode("gpu-1");
  REQUIRE(copy->conditions.size() == 1);
  CHECK(copy->conditions[0].status == "False");

  // The standalone agent's printout shows them too (issue 26: it used to
  // leave them out, as a dry-run API that could not write conditions).
  std::ostringstream standalone_out;
  DryRunNodeApi standalone("gpu-1", standalone_out, clock, &real);
  REQUIRE(standalone.PatchNodeConditions("gpu-1", {GpuFault()}).ok());
  CHECK(standalone_out.str().find("would send: PATCH /api/v1/nodes/gpu-1/status") !=
        std::string::npos);
  CHECK(standalone_out.str().find("~ condition  GPUFault=True (NvidiaXid)") != std::string::npos);
  CHECK(real.writes() == 0);
}

TEST_CASE("the tainter's dry run logs and counts the condition patch of a taint") {
  FakeClock clock;
  FakeNodeApi api;
  api.AddNode("gpu-1", {{"gpu", "true"}});
  MetricsRegistry metrics;
  Tainter::Options options;
  options.dry_run = true;
  Result<std::unique_ptr<Tainter>> tainter =
      Tainter::Create(options, ApplierApis{api, api}, metrics, clock);
  REQUIRE(tainter.ok());
  REQUIRE((*tainter)->AdoptAll().ok());

  std::vector<std::string> lines;
  SetLogSinkForTest([&](std::string_view line) { lines.emplace_back(line); });
  (*tainter)->Handle(SampleEvent("gpu-1", "ev-dry-1", clock.Now()));
  SetLogSinkForTest(nullptr);

  CHECK(api.writes() == 0);
  CHECK(metrics.CounterValue("faultline_tainter_dry_run_writes_total", {{"op", "conditions"}}) ==
        1);
  nlohmann::json logged;
  for (const std::string& line : lines) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("msg", "") == "dry-run: would patch node conditions") logged = j;
  }
  REQUIRE(logged.is_object());
  CHECK(logged["node"] == "gpu-1");
  CHECK(logged["conditions"]["GPUFault"] == "True");
  REQUIRE(logged["patch"]["status"]["conditions"].is_array());
  bool gpu_fault = false;
  for (const nlohmann::json& c : logged["patch"]["status"]["conditions"]) {
    gpu_fault |= c["type"] == "GPUFault" && c["status"] == "True" && c["reason"] == "NvidiaXid";
  }
  CHECK(gpu_fault);
}

}  // namespace
}  // namespace faultline
