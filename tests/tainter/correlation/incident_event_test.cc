// SPDX-License-Identifier: Apache-2.0
// Issue 16's incident Event: one per incident, on the job's owner object.
#include "tainter/correlation/incident_event.h"

#include <doctest/doctest.h>

#include "base/time_format.h"

namespace faultline {
namespace {

Incident Storm(int nodes) {
  Incident inc;
  inc.job = "ml/train-llm";
  inc.owner = {"kubeflow.org/v1", "PyTorchJob", "train-llm", "uid-train-llm"};
  inc.start = inc.end = std::chrono::system_clock::from_time_t(1795000000);
  for (int i = 0; i < nodes; ++i) inc.nodes.insert("gpu-" + std::to_string(i));
  inc.rules = {"nccl.watchdog-timeout"};
  inc.lines = nodes;
  return inc;
}

TEST_CASE("an incident without hardware evidence gets an Event on its owner saying so") {
  std::optional<NodeEvent> e = IncidentOwnerEvent(Storm(64));
  REQUIRE(e.has_value());
  REQUIRE(e->subject.has_value());
  CHECK(e->subject->kind == "PyTorchJob");
  CHECK(e->subject->api_version == "kubeflow.org/v1");
  CHECK(e->subject->name == "train-llm");
  CHECK(e->subject->namespace_name == "ml");
  CHECK(e->subject->uid == "uid-train-llm");
  CHECK(e->type == "Warning");
  CHECK(e->reason == "FaultlineIncident");
  CHECK(e->message == "NCCL watchdog storm on 64 nodes at " + FormatRfc3339(Storm(1).start) +
                          ": no hardware evidence on any of its nodes");
}

TEST_CASE("an attributed incident's owner Event names the node and its evidence") {
  Incident inc = Storm(64);
  inc.rules.insert("nccl.ib-completion-error");
  inc.attributed = "gpu-17";
  inc.evidence = {{"gpu-17", "ib.port-down", "mlx5_3 port 1 down", inc.start}};
  std::optional<NodeEvent> e = IncidentOwnerEvent(inc);
  REQUIRE(e.has_value());
  CHECK(e->node == "gpu-17");
  CHECK(e->message == "NCCL errors on 64 nodes at " + FormatRfc3339(inc.start) +
                          ": attributed to node gpu-17 (gpu-17 ib.port-down: mlx5_3 port 1 down)");
}

TEST_CASE("without a known owner there is no object to put the incident's Event on") {
  Incident inc = Storm(2);
  inc.owner = {};
  CHECK(!IncidentOwnerEvent(inc).has_value());
  inc = Storm(2);
  inc.job = "no-namespace";
  CHECK(!IncidentOwnerEvent(inc).has_value());
}

}  // namespace
}  // namespace faultline
