// SPDX-License-Identifier: Apache-2.0
// The API double's own semantics (the ones a real kube-apiserver has and
// other tests rely on), and fl-fake-apiserver as a separate process.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"
#include "tests/tainter/kube/kube_test_util.h"

extern char** environ;

namespace faultline {
namespace {

using nlohmann::json;

KubeResponse Send(KubeFixture& f, std::string method, std::string path, std::string type,
                  std::string body) {
  auto response = f.Api().http().Send({.verb = "test",
                                       .method = std::move(method),
                                       .path = std::move(path),
                                       .content_type = std::move(type),
                                       .body = std::move(body)});
  REQUIRE_MESSAGE(response.ok(), response.status().ToString());
  return *response;
}

TEST_CASE("fake API server: merge patches and PUT with a stale resourceVersion get 409") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {}, {Taint("node.kubernetes.io/not-ready", "", "NoSchedule")});
  const std::string rv = f.server->GetNodeJson("gpu-1")->at("metadata").at("resourceVersion");
  f.server->AddForeignTaint("gpu-1", "other", "", "NoExecute");  // bumps the version

  json stale = {{"metadata", {{"resourceVersion", rv}}},
                {"spec", {{"taints", json::array({Taint("mine", "", "NoSchedule")})}}}};
  CHECK(Send(f, "PATCH", "/api/v1/nodes/gpu-1", "application/merge-patch+json", stale.dump())
            .status == 409);
  CHECK(Send(f, "PATCH", "/api/v1/nodes/gpu-1", "application/strategic-merge-patch+json",
             stale.dump())
            .status == 409);
  json node = *f.server->GetNodeJson("gpu-1");
  json put = node;
  put["metadata"]["resourceVersion"] = rv;
  CHECK(Send(f, "PUT", "/api/v1/nodes/gpu-1", "application/json", put.dump()).status == 409);

  SUBCASE("a strategic merge patch of spec.taints replaces the whole list, as a real server does") {
    json fresh = {{"metadata", {{"resourceVersion", node["metadata"]["resourceVersion"]}}},
                  {"spec", {{"taints", json::array({Taint("mine", "", "NoSchedule")})}}}};
    CHECK(Send(f, "PATCH", "/api/v1/nodes/gpu-1", "application/strategic-merge-patch+json",
               fresh.dump())
              .status == 200);
    CHECK(f.server->GetNodeJson("gpu-1")->at("spec").at("taints") ==
          json::array({Taint("mine", "", "NoSchedule")}));
    CHECK(std::stoll(f.server->GetNodeJson("gpu-1")
                         ->at("metadata")
                         .at("resourceVersion")
                         .get<std::string>()) >
          std::stoll(node["metadata"]["resourceVersion"].get<std::string>()));
  }
  SUBCASE("a JSON patch that rewrites resourceVersion is a conflict") {
    json patch =
        json::array({{{"op", "replace"}, {"path", "/metadata/resourceVersion"}, {"value", "1"}}});
    CHECK(Send(f, "PATCH", "/api/v1/nodes/gpu-1", "application/json-patch+json", patch.dump())
              .status == 409);
  }
  SUBCASE("duplicate taints are invalid") {
    json patch = json::array(
        {{{"op", "add"}, {"path", "/spec/taints/-"}, {"value", Taint("other", "", "NoExecute")}}});
    CHECK(Send(f, "PATCH", "/api/v1/nodes/gpu-1", "application/json-patch+json", patch.dump())
              .status == 422);
  }
}

// Reads stdout of the child until a line starting with `prefix`, bounded.
std::string ReadLine(int fd, const std::string& prefix, int timeout_ms) {
  std::string buffer;
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char chunk[256];
      ssize_t n = read(fd, chunk, sizeof(chunk));
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      auto start = buffer.find(prefix);
      if (start != std::string::npos) {
        auto end = buffer.find('\n', start);
        if (end != std::string::npos) {
          return buffer.substr(start + prefix.size(), end - start - prefix.size());
        }
      }
    }
  }
  return {};
}

TEST_CASE(
    "fl-fake-apiserver runs as a process: URL line, kubeconfig, seeded nodes, /debug/requests") {
  TempDir dir;
  const std::string binary = std::string(FL_BINARY_DIR) + "/tests/support/fl-fake-apiserver";
  const std::string kubeconfig = dir / "kubeconfig";
  int out[2];
  REQUIRE(pipe(out) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {
      binary,   "--kubeconfig",   kubeconfig,
      "--node", "gpu-1:gpu=true", "--node",
      "gpu-2",  "--taint",        "gpu-1=node.kubernetes.io/not-ready:NoSchedule"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);

  const std::string url = ReadLine(out[0], "URL=", 10'000);
  CHECK(url.rfind("https://127.0.0.1:", 0) == 0);
  auto config = LoadKubeconfig(kubeconfig);
  REQUIRE_MESSAGE(config.ok(), config.status().ToString());
  CHECK(config->server == url);

  FakeClock clock;
  MetricsRegistry metrics;
  auto api = KubeNodeApi::Create(*config, {}, clock, metrics);
  REQUIRE(api.ok());
  auto nodes = (*api)->ListNodes("gpu=true");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 1);
  CHECK((*nodes)[0].taints.at(0).key == "node.kubernetes.io/not-ready");
  NodeChange change;
  change.add_taint = OurTaint();
  CHECK((*api)->UpdateNode("gpu-1", change).ok());
  auto log = (*api)->http().Send(
      {.verb = "test", .method = "GET", .path = "/debug/requests", .content_type = {}, .body = {}});
  REQUIRE(log.ok());
  json requests = json::parse(log->body);
  REQUIRE(requests.size() == 3);  // LIST, GET, PATCH
  CHECK(requests[2]["method"] == "PATCH");
  CHECK(requests[2]["content_type"] == "application/json-patch+json");

  api->reset();  // closes the kept-alive connection, so the server stops at once
  kill(pid, SIGTERM);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 200 && done == 0; ++i) {
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) usleep(25'000);
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  CHECK(done == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  close(out[0]);
}

}  // namespace
}  // namespace faultline
