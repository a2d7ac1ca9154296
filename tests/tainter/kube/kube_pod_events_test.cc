// SPDX-License-Identifier: Apache-2.0
// Events about pods and jobs (issue 15 "tell the job", issue 16's incident
// Event) and the pods-on-a-node list, through KubeNodeApi to the API double.
//
// API semantics relied on (kube-apiserver):
//  - ValidateEvent (pkg/apis/core/validation/events.go), for a core/v1 Event
//    without eventTime: an involvedObject with a namespace needs the Event's
//    metadata.namespace to be that same namespace, one without (a Node) needs
//    "default"; a Pod must name its namespace. Else 422 Invalid
//    ("involvedObject.namespace: Invalid value: ...: does not match
//    event.namespace"). So an Event about a Pod or a PyTorchJob is created
//    at /api/v1/namespaces/{its namespace}/events, never in the tainter's
//    event namespace.
//  - Event names are unique per namespace: the same name may exist in two
//    namespaces; a POST of an existing name is 409, a merge PATCH of
//    count/lastTimestamp updates it.
//  - Pods are selectable by spec.nodeName and status.phase
//    (PodToSelectableFields); terms joined by commas must all hold.
#include <doctest/doctest.h>

#include "tainter/kube/node_pods.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;

json Pod(const std::string& ns, const std::string& name, const std::string& node,
         const std::string& phase) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"uid", "uid-" + name},
            {"ownerReferences", json::array({{{"apiVersion", "kubeflow.org/v1"},
                                              {"kind", "PyTorchJob"},
                                              {"name", "train-llm"},
                                              {"uid", "uid-train-llm"},
                                              {"controller", true}}})}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", phase}}}};
}

NodeEvent PodEvent(const std::string& ns, const std::string& pod) {
  NodeEvent e;
  e.node = "gpu-17";
  e.subject = EventSubject{"v1", "Pod", ns, pod, "uid-" + pod};
  e.reason = "FaultlineNodeTakenOut";
  e.message = "node gpu-17 taken out of scheduling: Xid 79, GPU fell off the bus";
  return e;
}

TEST_CASE("ListPodsOnNode lists the node's running pods, every namespace, in one request") {
  KubeFixture f;
  f.server->PutPodJson(Pod("ml", "train-llm-worker-17", "gpu-17", "Running"));
  f.server->PutPodJson(Pod("ml", "train-llm-launcher", "gpu-17", "Pending"));
  f.server->PutPodJson(Pod("batch", "done-job", "gpu-17", "Succeeded"));
  f.server->PutPodJson(Pod("batch", "crashed", "gpu-17", "Failed"));
  f.server->PutPodJson(Pod("ml", "train-llm-worker-18", "gpu-18", "Running"));
  Result<std::vector<PodInfo>> pods = ListPodsOnNode(f.Api(), "gpu-17");
  REQUIRE_MESSAGE(pods.ok(), pods.status().ToString());
  REQUIRE(pods->size() == 2);
  for (const PodInfo& p : *pods) {
    CHECK(p.node_name == "gpu-17");
    CHECK(p.uid == "uid-" + p.name);
    CHECK(p.owner_kind == "PyTorchJob");
    CHECK(p.owner_uid == "uid-train-llm");
  }
  auto requests = f.server->Requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/api/v1/pods");
  CHECK(requests[0].params.at("fieldSelector") ==
        "spec.nodeName=gpu-17,status.phase!=Succeeded,status.phase!=Failed");
}

TEST_CASE("an Event about a Pod is created in the pod's namespace, involvedObject the Pod") {
  KubeFixture f;
  REQUIRE(f.Api().CreateEvent(PodEvent("ml", "train-llm-worker-17")).ok());
  auto events = f.server->Events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["metadata"]["namespace"] == "ml");
  CHECK(events[0]["metadata"]["name"].get<std::string>().rfind("train-llm-worker-17.", 0) == 0);
  CHECK(events[0]["involvedObject"] == json({{"kind", "Pod"},
                                             {"apiVersion", "v1"},
                                             {"name", "train-llm-worker-17"},
                                             {"namespace", "ml"},
                                             {"uid", "uid-train-llm-worker-17"}}));
  CHECK(f.server->CountRequests("POST", "/api/v1/namespaces/ml/events") == 1);

  SUBCASE("a repeat counts it in the pod's namespace") {
    REQUIRE(f.Api().CreateEvent(PodEvent("ml", "train-llm-worker-17")).ok());
    CHECK(f.server->Events()[0]["count"] == 2);
    CHECK(f.server->CountRequests("PATCH", "/api/v1/namespaces/ml/events/") == 1);
  }
  SUBCASE("the same pod name in another namespace is another Event") {
    REQUIRE(f.Api().CreateEvent(PodEvent("ml-2", "train-llm-worker-17")).ok());
    CHECK(f.server->Events().size() == 2);
  }
  SUBCASE("a job's owner object: kind, apiVersion, name, uid, in its namespace") {
    NodeEvent e;
    e.node = "gpu-17";
    e.subject = EventSubject{"kubeflow.org/v1", "PyTorchJob", "ml", "train-llm", "uid-train-llm"};
    e.reason = "FaultlineIncident";
    e.message = "NCCL watchdog storm on 64 nodes: no hardware evidence on any of its nodes";
    REQUIRE(f.Api().CreateEvent(e).ok());
    bool found = false;
    for (const json& ev : f.server->Events()) {
      if (ev["reason"] != "FaultlineIncident") continue;
      found = true;
      CHECK(ev["metadata"]["namespace"] == "ml");
      CHECK(ev["involvedObject"]["kind"] == "PyTorchJob");
      CHECK(ev["involvedObject"]["apiVersion"] == "kubeflow.org/v1");
      CHECK(ev["involvedObject"]["uid"] == "uid-train-llm");
    }
    CHECK(found);
  }
}

TEST_CASE("the API double refuses an Event whose namespace is not its involvedObject's (422)") {
  KubeFixture f;
  auto post = [&](const std::string& ns, const json& involved) {
    json e = {{"apiVersion", "v1"},
              {"kind", "Event"},
              {"metadata", {{"name", "e-" + ns}, {"namespace", ns}}},
              {"involvedObject", involved},
              {"reason", "FaultlineNodeTakenOut"},
              {"message", "m"},
              {"type", "Warning"}};
    auto r = f.Api().http().Send({.verb = "create",
                                  .method = "POST",
                                  .path = "/api/v1/namespaces/" + ns + "/events",
                                  .content_type = "application/json",
                                  .body = e.dump()});
    REQUIRE(r.ok());
    return r->status;
  };
  const json pod = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}, {"namespace", "ml"}};
  const json node = {{"kind", "Node"}, {"apiVersion", "v1"}, {"name", "gpu-1"}};
  CHECK(post("default", pod) == 422);  // a Pod's Event in the event namespace
  CHECK(post("ml", node) == 422);      // a Node's Event outside "default"
  CHECK(post("ml", json({{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}})) == 422);
  CHECK(f.server->Events().empty());
  CHECK(post("ml", pod) == 201);
  CHECK(post("default", node) == 201);
}

}  // namespace
}  // namespace faultline
