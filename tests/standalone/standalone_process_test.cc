// SPDX-License-Identifier: Apache-2.0
// `faultline-agent --standalone` as a real process: a followed file source
// with --dry-run, the Kubernetes API double (FakeApiServer over HTTPS),
// a restart that adopts, and --demo. Each waits with a bound.
#include <unistd.h>

#include <random>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/standalone/agent_process.h"
#include "tests/support/fake_api_server.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::string Marker() {
  std::random_device rd;
  return "fl-standalone-test-" + std::to_string(rd()) + std::to_string(::getpid());
}

std::string Xid(int xid, const std::string& pci, const std::string& marker) {
  return "NVRM: Xid (PCI:" + pci + "): " + std::to_string(xid) +
         ", pid=1234, name=python3, GPU has fallen off the bus. " + marker;
}

// A config that reads one followed file as kernel lines and nothing else.
std::string FileConfig(const TempDir& dir, const std::string& extra = "") {
  return "node_name: gpu-1\n"
         "state_dir: " +
         (dir / "state") +
         "\n"
         "metrics_address: \"\"\n"
         "log_level: info\n"
         "sources:\n"
         "  kmsg: {enabled: false}\n"
         "  journal: {enabled: false}\n"
         "  podlog: {enabled: false}\n"
         "  file: [{path: " +
         (dir / "kern.log") + ", follow: true, origin: kernel}]\n" + extra;
}

// No credentials anywhere: the agent must fall back to a dry run by itself.
std::map<std::string, std::string> NoKubeEnv(const TempDir& dir) {
  return {{"KUBECONFIG", dir / "no-such-kubeconfig"}, {"HOME", dir.path().string()}};
}

TEST_CASE(
    "dry run on a file: Xid 79 prints the taint patch with the annotation, Xid 13 only an Event") {
  TempDir dir;
  dir.Write("kern.log", "");
  const std::string config = dir.Write("agent.yaml", FileConfig(dir));
  AgentProcess agent(dir, "agent", {"--standalone", "--dry-run", "--config", config},
                     NoKubeEnv(dir));
  REQUIRE_MESSAGE(agent.WaitForOutput("DRY RUN"), agent.err());

  // Xid 13 first: the policy records one Event per node and rule per
  // event_interval, and the Xid 79's taint Event would hold a later one back.
  const std::string marker = Marker();
  AppendLine(dir / "kern.log",
             "NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a.out, Graphics Exception: "
             "ESR 0x504730=0x0 " +
                 marker);
  REQUIRE_MESSAGE(agent.WaitForOutput("FaultlineFault"), (agent.out() + agent.err()));
  std::string out = agent.out();
  CHECK(out.find("Event Warning FaultlineFault on node gpu-1: nvidia.xid") != std::string::npos);
  CHECK(out.find("PATCH /api/v1/nodes/") == std::string::npos);  // an Event, no patch

  AppendLine(dir / "kern.log", Xid(79, "0000:3b:00", marker));
  REQUIRE_MESSAGE(agent.WaitForOutput("FaultlineTainted"), (agent.out() + agent.err()));
  out = agent.out();
  CHECK(out.find("== detected nvidia.xid (critical, action taint)") != std::string::npos);
  // One node PATCH and, since issue 26, the node condition patch it brings
  // (PATCH .../status: GPUFault=True), which the dry run used to leave out.
  CHECK(CountOf(out, "PATCH /api/v1/nodes/gpu-1  ") == 1);
  CHECK(CountOf(out, "PATCH /api/v1/nodes/gpu-1/status  ") == 1);
  CHECK(out.find("~ condition  GPUFault=True (NvidiaXid)") != std::string::npos);
  CHECK(out.find("+ taint      faultline.dev/faulty=true:NoSchedule") != std::string::npos);
  CHECK(out.find("\"path\": \"/spec/taints\"") != std::string::npos);
  CHECK(out.find("\"effect\": \"NoSchedule\"") != std::string::npos);
  CHECK(out.find("\"path\": \"/metadata/annotations\"") != std::string::npos);
  CHECK(out.find("faultline.dev/reasons") != std::string::npos);
  CHECK(out.find("GPU has fallen off the bus. " + marker) != std::string::npos);  // the log line
  CHECK(agent.Stop() == 0);
}

TEST_CASE("with no credentials and no --dry-run the agent says so and runs dry") {
  TempDir dir;
  dir.Write("kern.log", "");
  const std::string config = dir.Write("agent.yaml", FileConfig(dir));
  AgentProcess agent(dir, "agent", {"--standalone", "--config", config}, NoKubeEnv(dir));
  REQUIRE_MESSAGE(agent.WaitForOutput("DRY RUN: no Kubernetes credentials found"), agent.err());
  CHECK(agent.err().find("no Kubernetes credentials found") != std::string::npos);
  CHECK(agent.Stop() == 0);
}

struct ApiFixture {
  TempDir dir;
  std::unique_ptr<FakeApiServer> server;
  std::string config;
  ApiFixture() {
    auto started = FakeApiServer::Start();
    REQUIRE(started.ok());
    server = std::move(*started);
    server->AddNode("gpu-1");
    server->AddNode("gpu-2");
    REQUIRE(server->AddForeignTaint("gpu-1", "example.com/maintenance", "planned", "NoSchedule"));
    dir.Write("kern.log", "");
    const std::string kubeconfig = dir.Write("kubeconfig", server->KubeconfigYaml());
    config =
        dir.Write("agent.yaml", FileConfig(dir, "kubernetes: {kubeconfig: " + kubeconfig + "}\n"));
  }
  std::vector<nlohmann::json> Taints(const std::string& node, const std::string& key) {
    std::vector<nlohmann::json> out;
    auto n = server->GetNodeJson(node);
    if (!n) return out;
    for (const auto& t :
         n->value(nlohmann::json::json_pointer("/spec/taints"), nlohmann::json::array())) {
      if (t.value("key", "") == key) out.push_back(t);
    }
    return out;
  }
  std::string Annotation(const std::string& node) {
    auto n = server->GetNodeJson(node);
    if (!n) return "";
    return n->value(nlohmann::json::json_pointer("/metadata/annotations/faultline.dev~1reasons"),
                    std::string());
  }
  int EventsWith(const std::string& reason) {
    int n = 0;
    for (const auto& e : server->Events()) n += e.value("reason", "") == reason;
    return n;
  }
  // No request names another node, and none lists nodes.
  void CheckOnlyOwnNode() {
    for (const auto& r : server->Requests()) {
      INFO(r.method << " " << r.path << " " << r.body);
      CHECK(r.path.find("gpu-2") == std::string::npos);
      CHECK(r.body.find("gpu-2") == std::string::npos);
      CHECK(r.path != "/api/v1/nodes");
      CHECK(r.status < 400);
    }
  }
  AgentProcess Start(const std::string& name) {
    return AgentProcess(dir, name, {"--standalone", "--config", config},
                        {{"KUBECONFIG", dir / "unused"}, {"HOME", dir.path().string()}});
  }
};

TEST_CASE(
    "live against the API double: Xid 79 taints, annotates and records a Warning Event on its own "
    "node only") {
  ApiFixture f;
  AgentProcess agent = f.Start("agent");
  REQUIRE_MESSAGE(agent.WaitForOutput("LIVE: tainting node gpu-1"), (agent.out() + agent.err()));
  const std::string marker = Marker();
  AppendLine(f.dir / "kern.log",
             "NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a.out, Graphics Exception: "
             "ESR 0x504730=0x0 " +
                 marker);
  REQUIRE_MESSAGE(agent.WaitFor([&] { return f.EventsWith("FaultlineFault") == 1; }), agent.err());
  CHECK(f.Taints("gpu-1", "faultline.dev/faulty").empty());  // Xid 13: an Event only

  AppendLine(f.dir / "kern.log", Xid(79, "0000:3b:00", marker));
  REQUIRE_MESSAGE(agent.WaitFor([&] { return f.EventsWith("FaultlineTainted") == 1; }),
                  agent.err());
  const auto ours = f.Taints("gpu-1", "faultline.dev/faulty");
  REQUIRE(ours.size() == 1);
  CHECK(ours[0].value("effect", "") == "NoSchedule");
  CHECK(ours[0].value("value", "") == "true");
  CHECK(f.Taints("gpu-1", "example.com/maintenance").size() == 1);  // the foreign taint survives
  CHECK(f.Annotation("gpu-1").find("nvidia.xid") != std::string::npos);
  CHECK(f.Annotation("gpu-1").find(marker) != std::string::npos);
  // The node condition remediation tools read, written (before the Event)
  // as a strategic merge patch to nodes/status: the kubelet's Ready stays.
  const nlohmann::json conditions = (*f.server->GetNodeJson("gpu-1"))["status"]["conditions"];
  auto condition = [&](const std::string& type) {
    for (const auto& c : conditions) {
      if (c.value("type", "") == type) return c;
    }
    return nlohmann::json();
  };
  CHECK(condition("GPUFault").value("status", "") == "True");
  CHECK(condition("GPUFault").value("reason", "") == "NvidiaXid");
  CHECK(condition("Ready").value("status", "") == "True");
  CHECK(f.Taints("gpu-2", "faultline.dev/faulty").empty());
  for (const auto& e : f.server->Events()) {
    CHECK(e.value("type", "") == "Warning");
    CHECK(e["involvedObject"].value("name", "") == "gpu-1");
  }
  CHECK(agent.Stop() == 0);
  f.CheckOnlyOwnNode();
  CHECK(f.server->CountRequests("GET", "/api/v1/nodes/gpu-1") >= 1);
}

TEST_CASE("a restarted standalone agent adopts its taint: no second taint, no lift") {
  ApiFixture f;
  const std::string marker = Marker();
  {
    AgentProcess first = f.Start("first");
    REQUIRE_MESSAGE(first.WaitForOutput("LIVE"), first.err());
    AppendLine(f.dir / "kern.log", Xid(79, "0000:3b:00", marker));
    REQUIRE_MESSAGE(first.WaitFor([&] { return f.EventsWith("FaultlineTainted") == 1; }),
                    first.err());
    REQUIRE(first.Stop() == 0);
  }
  const std::string annotation_before = f.Annotation("gpu-1");
  f.server->ClearRequests();

  AgentProcess second = f.Start("second");
  REQUIRE_MESSAGE(second.WaitForOutput("LIVE"), second.err());
  // A new Xid 79 on another GPU, then an Xid 13 as a barrier: the file is
  // read in order, so once the Xid 13's Event exists the Xid 79 was decided.
  AppendLine(f.dir / "kern.log", Xid(79, "0000:5e:00", marker));
  AppendLine(f.dir / "kern.log",
             "NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a.out, Graphics Exception " + marker);
  REQUIRE_MESSAGE(second.WaitFor([&] { return f.EventsWith("FaultlineFault") >= 1; }),
                  second.err());
  CHECK(second.Stop() == 0);

  CHECK(f.Taints("gpu-1", "faultline.dev/faulty").size() == 1);
  CHECK(f.Taints("gpu-1", "example.com/maintenance").size() == 1);
  CHECK(f.EventsWith("FaultlineTainted") == 1);    // not tainted a second time
  CHECK(f.EventsWith("FaultlineUntainted") == 0);  // never lifted
  CHECK(f.Annotation("gpu-1").find("nvidia.xid") != std::string::npos);
  for (const auto& r : f.server->Requests()) {
    if (r.method == "PATCH" && r.path.rfind("/api/v1/nodes/", 0) == 0) {
      INFO(r.body);
      CHECK(r.body.find("\"remove\"") == std::string::npos);
      CHECK(r.body.find("faultline.dev/faulty") == std::string::npos);  // no taint re-added
    }
  }
  CHECK(f.server->CountRequests("GET", "/api/v1/nodes/gpu-1") >= 1);  // adoption read
  f.CheckOnlyOwnNode();
}

TEST_CASE("a node name the cluster does not know is reported, and no other node is touched") {
  ApiFixture f;
  f.server->DeleteNode("gpu-1");
  AgentProcess agent = f.Start("agent");
  REQUIRE_MESSAGE(agent.WaitForOutput("no node named gpu-1"), (agent.out() + agent.err()));
  AppendLine(f.dir / "kern.log", Xid(79, "0000:3b:00", Marker()));
  // The decision for the unknown node is dropped; its GetNode is the proof
  // that the event was handled.
  REQUIRE(
      agent.WaitFor([&] { return f.server->CountRequests("GET", "/api/v1/nodes/gpu-1") >= 2; }));
  CHECK(agent.Stop() == 0);
  CHECK(f.Taints("gpu-2", "faultline.dev/faulty").empty());
  CHECK(f.server->Events().empty());
  for (const auto& r : f.server->Requests()) {
    INFO(r.method << " " << r.path);
    CHECK(r.method == "GET");
    CHECK(r.path == "/api/v1/nodes/gpu-1");
  }
}

TEST_CASE("--demo detects its fake Xids, prints the taint patch and exits 0") {
  TempDir dir;
  AgentProcess demo(dir, "demo", {"--standalone", "--demo"}, NoKubeEnv(dir));
  const int code = demo.Wait(std::chrono::seconds(30));
  const std::string out = demo.out();
  INFO(out << demo.err());
  CHECK(code == 0);
  CHECK(out.find("PATCH /api/v1/nodes/") != std::string::npos);
  CHECK(out.find("+ taint      faultline.dev/faulty=true:NoSchedule") != std::string::npos);
  CHECK(out.find("FaultlineTainted") != std::string::npos);
  CHECK(out.find("FaultlineFault") != std::string::npos);
  CHECK(out.find("2 of 2 fake faults detected") != std::string::npos);
  if (out.find("cannot be opened for reading and writing here") != std::string::npos) {
    MESSAGE("SKIPPED: /dev/kmsg is not writable here; the demo used its file source");
  }
}

}  // namespace
}  // namespace faultline
