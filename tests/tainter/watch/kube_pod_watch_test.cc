// SPDX-License-Identifier: Apache-2.0
// The pod list + watch fleet correlation uses (KubeNodeApi::ListPodsAt,
// WatchPods, PodInformer) against the API double.
//
// API semantics relied on (kube-apiserver): pods can be selected by the
// field status.podIP (PodToSelectableFields), so `status.podIP!=` lists
// and watches only pods that have an IP; a field pods cannot be selected on
// is 400 BadRequest. A list carries the resourceVersion it was read at; a
// watch from it sends every later change of the selected pods in order, a
// pod that starts matching (gets its IP) as ADDED and one that stops
// matching or is deleted as DELETED; pods share the one resourceVersion
// sequence with nodes.
#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "tainter/watch/pod_informer.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json PodJson(const std::string& name, const std::string& node, const std::string& ip) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "ml"},
                {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                                  {"kind", "Job"},
                                                  {"name", "helper"},
                                                  {"controller", false}},
                                                 {{"apiVersion", "kubeflow.org/v1"},
                                                  {"kind", "PyTorchJob"},
                                                  {"name", "train-a"},
                                                  {"controller", true}}})}}},
              {"spec", {{"nodeName", node}}},
              {"status", json::object()}};
  if (!ip.empty()) {
    pod["status"]["podIP"] = ip;
    pod["status"]["podIPs"] = json::array({{{"ip", ip}}});
  }
  return pod;
}

TEST_CASE("pods with an IP are listed with their node, IPs and controller, then watched") {
  KubeFixture f;
  f.server->PutPodJson(PodJson("train-a-worker-0", "gpu-0", "10.1.0.5"));
  f.server->PutPodJson(PodJson("train-a-worker-1", "", ""));  // pending: no IP yet
  Result<PodListing> listing = f.Api().ListPodsAt("status.podIP!=");
  REQUIRE(listing.ok());
  REQUIRE(listing->pods.size() == 1);
  const PodInfo& p = listing->pods[0];
  CHECK(p.namespace_name == "ml");
  CHECK(p.node_name == "gpu-0");
  CHECK(p.ips == std::vector<std::string>{"10.1.0.5"});
  CHECK(p.owner_kind == "PyTorchJob");  // the controller, not the other reference
  CHECK(p.owner_name == "train-a");
  CHECK(p.owner_api_version == "kubeflow.org/v1");
  CHECK(f.server->Requests().back().params.at("fieldSelector") == "status.podIP!=");

  // The pending pod is scheduled and gets its IP; the first one is deleted.
  f.server->PutPodJson(PodJson("train-a-worker-1", "gpu-1", "10.1.1.5"));
  f.server->DeletePod("ml", "train-a-worker-0");
  std::vector<PodWatchEvent> seen;
  Status s = f.Api().WatchPods(
      "status.podIP!=", listing->resource_version, seconds(10),
      [&](const PodWatchEvent& e) {
        seen.push_back(e);
        return seen.size() < 2;
      },
      nullptr);
  CHECK(s.ok());
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].type == PodWatchEvent::Type::kAdded);
  CHECK(seen[0].pod.name == "train-a-worker-1");
  CHECK(seen[0].pod.node_name == "gpu-1");
  CHECK(seen[1].type == PodWatchEvent::Type::kDeleted);
  CHECK(seen[1].pod.name == "train-a-worker-0");
}

TEST_CASE("a field pods cannot be selected on is refused (400), not ignored") {
  KubeFixture f;
  Result<PodListing> listing = f.Api().ListPodsAt("status.hostIP=10.0.0.1");
  REQUIRE_FALSE(listing.ok());
  CHECK(listing.error().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("the pod informer lists, then follows the watch") {
  KubeFixture f;
  f.server->PutPodJson(PodJson("train-a-worker-0", "gpu-0", "10.1.0.5"));
  KubeNodeApi::Options o;
  auto api = KubeNodeApi::Create(f.config, o, RealClock(), f.metrics);
  REQUIRE(api.ok());
  PodInformer informer(**api,
                       {.watch_timeout = seconds(1), .retry_delay = std::chrono::milliseconds(100)},
                       f.metrics);
  informer.Start();
  std::vector<PodInformer::Change> changes;
  auto wait_for = [&](auto done) { return TakeChangesUntil(informer, changes, done); };
  REQUIRE(wait_for([&] { return !changes.empty(); }));
  CHECK(changes[0].kind == PodInformer::Change::Kind::kList);
  CHECK(changes[0].objects.size() == 1);
  f.server->PutPodJson(PodJson("train-a-worker-1", "gpu-1", "10.1.1.5"));
  REQUIRE(wait_for([&] {
    return changes.back().kind == PodInformer::Change::Kind::kUpsert &&
           changes.back().objects[0].name == "train-a-worker-1";
  }));
  informer.Stop();
}

}  // namespace
}  // namespace faultline
