// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_node_api.h"

#include <doctest/doctest.h>

#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json LastPatch(const FakeApiServer& server) {
  auto requests = server.Requests();
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    if (it->method == "PATCH") return json::parse(it->body);
  }
  return json();
}

TEST_CASE(
    "UpdateNode adds faultline's taint and annotation in one patch that tests resourceVersion") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {}, {Taint("node.kubernetes.io/not-ready", "", "NoSchedule")});
  const std::string rv_before =
      f.server->GetNodeJson("gpu-1")->at("metadata").at("resourceVersion");

  NodeChange change;
  change.add_taint = OurTaint();
  change.annotations["faultline.dev/reasons"] = R"([{"rule":"xid-79"}])";
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());

  json node = *f.server->GetNodeJson("gpu-1");
  CHECK(node["spec"]["taints"] ==
        json::array({Taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                     Taint("faultline.dev/faulty", "true", "NoSchedule")}));
  CHECK(node["metadata"]["annotations"]["faultline.dev/reasons"] == R"([{"rule":"xid-79"}])");

  auto requests = f.server->Requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].path == "/api/v1/nodes/gpu-1");
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[1].content_type == "application/json-patch+json");
  json patch = json::parse(requests[1].body);
  CHECK(patch[0] ==
        json({{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", rv_before}}));
  CHECK(patch[1] == json({{"op", "add"},
                          {"path", "/spec/taints/-"},
                          {"value", Taint("faultline.dev/faulty", "true", "NoSchedule")}}));
  CHECK(f.metrics.CounterValue("faultline_kube_requests_total",
                               {{"verb", "patch"}, {"code", "200"}}) == 1);
}

TEST_CASE("an annotation key with a slash is escaped as ~1 when the annotations map exists") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["annotations"] = {{"other", "x"}}; });
  NodeChange change;
  change.annotations["faultline.dev/reasons"] = "r";
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());
  json patch = LastPatch(*f.server);
  CHECK(patch[1] == json({{"op", "add"},
                          {"path", "/metadata/annotations/faultline.dev~1reasons"},
                          {"value", "r"}}));
  json annotations = f.server->GetNodeJson("gpu-1")->at("metadata").at("annotations");
  CHECK(annotations == json({{"other", "x"}, {"faultline.dev/reasons", "r"}}));

  SUBCASE("and removed with the same pointer") {
    NodeChange remove;
    remove.annotations["faultline.dev/reasons"] = std::nullopt;
    REQUIRE(f.Api().UpdateNode("gpu-1", remove).ok());
    CHECK(LastPatch(*f.server)[1] ==
          json({{"op", "remove"}, {"path", "/metadata/annotations/faultline.dev~1reasons"}}));
    CHECK(f.server->GetNodeJson("gpu-1")->at("metadata").at("annotations") ==
          json({{"other", "x"}}));
  }
}

TEST_CASE("a node without spec.taints gets add /spec/taints with the whole array") {
  KubeFixture f;
  f.server->AddNode("cpu-1");
  REQUIRE_FALSE(f.server->GetNodeJson("cpu-1")->at("spec").contains("taints"));
  NodeChange change;
  change.add_taint = OurTaint();
  REQUIRE(f.Api().UpdateNode("cpu-1", change).ok());
  CHECK(LastPatch(*f.server)[1] ==
        json({{"op", "add"},
              {"path", "/spec/taints"},
              {"value", json::array({Taint("faultline.dev/faulty", "true", "NoSchedule")})}}));
  CHECK(f.server->GetNodeJson("cpu-1")->at("spec").at("taints").size() == 1);
  CHECK(f.server->CountRequests("PATCH") == 1);
}

TEST_CASE("a foreign taint written between our GET and PATCH survives: conflict, re-read, retry") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {}, {Taint("node.kubernetes.io/not-ready", "", "NoSchedule")});
  f.server->BeforeNextNodeWrite([](FakeApiServer& s) {
    s.AddForeignTaint("gpu-1", "example.com/maintenance", "true", "NoExecute");
  });
  NodeChange change;
  change.add_taint = OurTaint();
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());

  json taints = f.server->GetNodeJson("gpu-1")->at("spec").at("taints");
  CHECK(taints == json::array({Taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                               Taint("example.com/maintenance", "true", "NoExecute"),
                               Taint("faultline.dev/faulty", "true", "NoSchedule")}));
  auto requests = f.server->Requests();
  REQUIRE(requests.size() == 4);  // GET, PATCH (422: stale test), GET, PATCH
  CHECK(requests[1].status == 422);
  CHECK(requests[2].method == "GET");
  CHECK(requests[3].status == 200);
  CHECK(f.metrics.CounterValue("faultline_kube_conflicts_total") == 1);
}

TEST_CASE("a 409 from the server is re-read and retried, endless conflicts end in kAborted") {
  KubeNodeApi::Options options;
  options.max_update_attempts = 3;
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  NodeChange change;
  change.add_taint = OurTaint();

  SUBCASE("one conflict") {
    f.server->FailNext(1, 409, "PATCH");
    REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());
    CHECK(f.server->CountRequests("PATCH") == 2);
  }
  SUBCASE("conflicts forever") {
    f.server->FailNext(100, 409, "PATCH");
    Status s = f.Api().UpdateNode("gpu-1", change);
    CHECK(s.code() == StatusCode::kAborted);
    CHECK(f.server->CountRequests("PATCH") == 3);
    CHECK(f.metrics.CounterValue("faultline_kube_conflicts_total") == 3);
  }
}

TEST_CASE("a 422 while the node is unchanged is an invalid patch, not a conflict") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  NodeChange change;
  change.add_taint = OurTaint();
  change.add_taint->effect = "NoWay";
  Status s = f.Api().UpdateNode("gpu-1", change);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(f.server->CountRequests("PATCH") == 1);
  CHECK(f.metrics.CounterValue("faultline_kube_conflicts_total") == 0);
}

TEST_CASE("removing faultline's taint removes only it, guarded by a test of that exact taint") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {},
                    {Taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                     Taint("faultline.dev/faulty", "true", "NoSchedule"),
                     Taint("example.com/other", "x", "NoExecute")});
  NodeChange change;
  change.remove_taint = OurTaint();
  change.annotations["faultline.dev/reasons"] = std::nullopt;  // absent: nothing to remove
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());
  json patch = LastPatch(*f.server);
  REQUIRE(patch.size() == 3);
  CHECK(patch[1] == json({{"op", "test"},
                          {"path", "/spec/taints/1"},
                          {"value", Taint("faultline.dev/faulty", "true", "NoSchedule")}}));
  CHECK(patch[2] == json({{"op", "remove"}, {"path", "/spec/taints/1"}}));
  CHECK(f.server->GetNodeJson("gpu-1")->at("spec").at("taints") ==
        json::array({Taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                     Taint("example.com/other", "x", "NoExecute")}));
}

TEST_CASE("a change already in effect sends no write") {
  KubeFixture f;
  f.server->AddNode("gpu-1", {}, {Taint("faultline.dev/faulty", "true", "NoSchedule")});
  f.server->MutateNode("gpu-1", [](json& n) { n["metadata"]["annotations"] = {{"a", "1"}}; });
  NodeChange change;
  change.add_taint = OurTaint();
  change.annotations["a"] = "1";
  change.annotations["gone"] = std::nullopt;
  NodeTaint absent = OurTaint();
  absent.effect = "NoExecute";
  change.remove_taint = absent;
  REQUIRE(f.Api().UpdateNode("gpu-1", change).ok());
  CHECK(f.server->CountRequests("PATCH") == 0);
  CHECK(f.server->CountRequests("GET") == 1);
}

TEST_CASE("429 is retried after the server's Retry-After") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  f.server->FailNext(2, 429, "GET", "", /*retry_after_seconds=*/3);
  auto node = f.Api().GetNode("gpu-1");
  REQUIRE(node.ok());
  CHECK(node->name == "gpu-1");
  CHECK(f.sleeps == std::vector<std::chrono::nanoseconds>{seconds(3), seconds(3)});
  CHECK(f.metrics.CounterValue("faultline_kube_retries_total",
                               {{"verb", "get"}, {"reason", "429"}}) == 2);
  CHECK(f.metrics.CounterValue("faultline_kube_requests_total",
                               {{"verb", "get"}, {"code", "429"}}) == 2);
}

TEST_CASE("5xx is retried with capped, jittered exponential backoff, then succeeds") {
  KubeNodeApi::Options options;
  options.http.backoff_base = std::chrono::milliseconds(200);
  options.http.backoff_cap = std::chrono::milliseconds(500);
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  f.server->FailNext(1, 500);
  f.server->FailNext(2, 503);
  REQUIRE(f.Api().GetNode("gpu-1").ok());
  REQUIRE(f.sleeps.size() == 3);
  CHECK(f.sleeps[0] <= std::chrono::milliseconds(200));
  CHECK(f.sleeps[1] <= std::chrono::milliseconds(400));
  CHECK(f.sleeps[2] <= std::chrono::milliseconds(500));
  CHECK(f.metrics.CounterValue("faultline_kube_retries_total",
                               {{"verb", "get"}, {"reason", "5xx"}}) == 3);
}

TEST_CASE("5xx that never ends gives kUnavailable within the attempt limit") {
  KubeNodeApi::Options options;
  options.http.max_attempts = 4;
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  f.server->FailNext(100, 503);
  auto node = f.Api().GetNode("gpu-1");
  CHECK(node.error().code() == StatusCode::kUnavailable);
  CHECK(f.server->CountRequests("GET") == 4);
}

TEST_CASE("a Retry-After beyond the call deadline fails at once instead of waiting") {
  KubeNodeApi::Options options;
  options.http.call_deadline = std::chrono::milliseconds(2000);
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  f.server->FailNext(1, 429, "GET", "", /*retry_after_seconds=*/60);
  CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kUnavailable);
  CHECK(f.sleeps.empty());
}

TEST_CASE("HTTP errors map to the NodeApi codes: 401, 403, 404") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  SUBCASE("a wrong token is kUnauthenticated") {
    f.config.token = "wrong";
    CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kUnauthenticated);
  }
  SUBCASE("no token at all is anonymous, which is forbidden") {
    f.config.token.clear();
    CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kPermissionDenied);
  }
  SUBCASE("RBAC refusal is kPermissionDenied") {
    f.server->FailNext(1, 403, "PATCH");
    NodeChange change;
    change.add_taint = OurTaint();
    CHECK(f.Api().UpdateNode("gpu-1", change).code() == StatusCode::kPermissionDenied);
  }
  SUBCASE("a missing node is kNotFound, on read and on update") {
    CHECK(f.Api().GetNode("gone").error().code() == StatusCode::kNotFound);
    NodeChange change;
    change.add_taint = OurTaint();
    CHECK(f.Api().UpdateNode("gone", change).code() == StatusCode::kNotFound);
  }
}

TEST_CASE("ListNodes follows continue tokens and passes the label selector") {
  KubeNodeApi::Options options;
  options.list_page_size = 2;
  KubeFixture f(options);
  for (int i = 0; i < 5; ++i) f.server->AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
  f.server->AddNode("cpu-0");
  f.server->AddNode("gpu-opted-out", {{"gpu", "true"}, {"faultline.dev/opt-out", "true"}});

  auto nodes = f.Api().ListNodes("gpu=true,!faultline.dev/opt-out");
  REQUIRE(nodes.ok());
  std::vector<std::string> names;
  for (const auto& n : *nodes) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4"});
  auto requests = f.server->Requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].params.at("labelSelector") == "gpu=true,!faultline.dev/opt-out");
  CHECK(requests[0].params.at("limit") == "2");
  CHECK(requests[1].params.count("continue") == 1);
  CHECK((*nodes)[0].labels.at("gpu") == "true");
  CHECK(!(*nodes)[0].resource_version.empty());
}

TEST_CASE("CreateEvent posts a Warning Event on the node, a repeat patches its count") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  NodeEvent event;
  event.node = "gpu-1";
  event.node_uid = "uid-gpu-1";
  event.reason = "FaultlineTainted";
  event.message = "rule nvidia.xid-79: GPU has fallen off the bus " + std::string(2000, 'x');
  REQUIRE(f.Api().CreateEvent(event).ok());
  auto events = f.server->Events();
  REQUIRE(events.size() == 1);
  json e = events[0];
  CHECK(e["involvedObject"] ==
        json({{"kind", "Node"}, {"apiVersion", "v1"}, {"name", "gpu-1"}, {"uid", "uid-gpu-1"}}));
  CHECK(e["type"] == "Warning");
  CHECK(e["reason"] == "FaultlineTainted");
  CHECK(e["message"].get<std::string>().size() == 1024);
  CHECK(e["source"]["component"] == "faultline");
  CHECK(e["reportingComponent"] == "faultline");
  CHECK(e["count"] == 1);
  CHECK(e["metadata"]["namespace"] == "default");
  CHECK(e["metadata"]["name"].get<std::string>().rfind("gpu-1.", 0) == 0);

  REQUIRE(f.Api().CreateEvent(event).ok());
  events = f.server->Events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["count"] == 2);
  CHECK(f.server->CountRequests("PATCH", "/api/v1/namespaces/default/events/") == 1);

  SUBCASE("another client (or a restart) finds the event existing and counts on") {
    auto other = KubeNodeApi::Create(f.config, f.options, f.clock, f.metrics);
    REQUIRE(other.ok());
    REQUIRE((*other)->CreateEvent(event).ok());
    CHECK(f.server->Events()[0]["count"] == 3);
  }
}

TEST_CASE("requests wait for the QPS and burst limiter, bounded by the deadline") {
  KubeNodeApi::Options options;
  options.http.qps = 5;
  options.http.burst = 2;
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  for (int i = 0; i < 4; ++i) REQUIRE(f.Api().GetNode("gpu-1").ok());
  CHECK(f.sleeps == std::vector<std::chrono::nanoseconds>{std::chrono::milliseconds(200),
                                                          std::chrono::milliseconds(200)});
  CHECK(f.metrics.CounterValue("faultline_kube_throttled_total") == 2);
}

TEST_CASE("a refused connection is retried with backoff and ends in kUnavailable") {
  KubeNodeApi::Options options;
  options.http.max_attempts = 3;
  KubeFixture f(options);
  f.server->Stop();
  auto node = f.Api().GetNode("gpu-1");
  CHECK(node.error().code() == StatusCode::kUnavailable);
  CHECK(f.sleeps.size() == 2);
  CHECK(f.metrics.CounterValue("faultline_kube_requests_total",
                               {{"verb", "get"}, {"code", "error"}}) == 3);
}

}  // namespace
}  // namespace faultline
