// SPDX-License-Identifier: Apache-2.0
// What one decision costs in Kubernetes API requests, counted by the API
// double. In a storm the tainter decides at kubernetes.qps divided by the
// requests per decision (every request, reads too, takes a token of the
// client-side QPS limiter, as in client-go): at 5,000 nodes and qps 50 it
// decided about 17 faults/s, 9 requests per taint and 1 per refusal. So the
// count per decision is the storm's throughput, asserted here in steps.
//
// API-double semantics relied on (as kube-apiserver): GET /api/v1/nodes/{name}
// returns the node with its resourceVersion; a JSON patch whose first op
// tests /metadata/resourceVersion is refused with 422 when the node moved;
// every request is recorded with its method and path.
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tests/fakes/sample_event.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

FaultEvent TaintEvent(const std::string& node, const FakeClock& clock) {
  FaultEvent e = SampleEvent(node, "storm-" + node, clock.Now());
  e.origin = Origin::kAny;  // as the storm's events always were: no origin claimed
  e.rule = "storm.link_down";
  e.category = "network";
  e.summary = "link down";
  e.message = "mlx5: link down";
  return e;
}

KubeNodeApi::Options Unpaced() {
  KubeNodeApi::Options kopts;
  kopts.http.qps = 0;  // counted, not paced
  return kopts;
}

// A tainter that adopted 20 GPU nodes on the API double, requests counted.
struct CostFixture {
  KubeFixture f{Unpaced()};
  FakeApiServer& api_server = *f.server;
  std::unique_ptr<Tainter> tainter;

  explicit CostFixture(const Tainter::Options& options) {
    SetLogLevel(LogLevel::kWarning);
    for (int i = 0; i < 20; ++i) api_server.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
    auto created = Tainter::Create(options, ApplierApis::All(f.Api()), f.metrics, f.clock);
    REQUIRE(created.ok());
    tainter = std::move(*created);
    REQUIRE(tainter->AdoptAll().ok());
  }
};

TEST_CASE(
    "a taint costs 7 API requests (one GET of the node before the write, none before its "
    "conditions), a valve refusal 1 (its Event)") {
  Tainter::Options topts;
  topts.policy.max_fraction = 0.1;  // 2 of 20
  topts.policy.per_rule_max_fraction = 0.1;
  topts.policy.max_new_taints = 0;
  CostFixture c(topts);
  FakeApiServer& api_server = c.api_server;
  const FakeClock& clock = c.f.clock;
  Tainter* tainter = c.tainter.get();

  api_server.ClearRequests();
  tainter->Handle(TaintEvent("gpu-0", clock));
  tainter->Handle(TaintEvent("gpu-1", clock));
  CHECK(tainter->policy().tainted_nodes() == 2);
  // Per taint: the valve lease read and written, the node read once (its
  // live reasons and resourceVersion) and patched, its conditions patched,
  // one Event, and one list of the node's pods (to tell them; it has none
  // here, so no pod Event). The conditions come from the same read: a patch
  // of the node never changes its status (kube-apiserver's node strategy
  // keeps the old status on an update of the main resource; the double
  // likewise), so a GET after the patch returned the same conditions and
  // made it 8. A second GET between the read and the patch
  // (KubeNodeApi::UpdateNode reading again what the tainter had just read)
  // made it 9.
  CHECK(api_server.CountRequests("GET", "/api/v1/nodes/") == 2 * 1);
  CHECK(api_server.CountRequests("PATCH", "/api/v1/nodes/") == 2 * 2);  // node and its status
  CHECK(api_server.CountRequests("GET", "/api/v1/pods") == 2);          // pod_events' list
  // The lease is read once: after its own write the client knows the Lease
  // and its version (a conflict would make it read again).
  CHECK(api_server.CountRequests("GET", "/apis/coordination.k8s.io/") == 1);
  CHECK(api_server.Requests().size() <= 2 * 6 + 1 + 1);  // + the lease's first read, its creation

  api_server.ClearRequests();
  for (int i = 2; i < 6; ++i) tainter->Handle(TaintEvent("gpu-" + std::to_string(i), clock));
  CHECK(tainter->policy().tainted_nodes() == 2);
  CHECK(api_server.CountRequests("POST", "/api/v1/namespaces/default/events") == 4);
  CHECK(api_server.Requests().size() == 4);  // the refusal's Event, nothing read
}

TEST_CASE("the valve Lease is not read again after the client's own write, unless it conflicts") {
  KubeFixture a{Unpaced()};
  KubeFixture& f = a;
  FakeApiServer& server = *f.server;
  KubeNodeApi& mine = f.Api();
  Result<SharedRecord> first = mine.GetValveRecord();  // none yet: 404
  REQUIRE(first.ok());
  REQUIRE(mine.PutValveRecord("[1]", first->resource_version).ok());  // POST: created
  server.ClearRequests();
  Result<SharedRecord> known = mine.GetValveRecord();
  REQUIRE(known.ok());
  CHECK(known->value == "[1]");
  CHECK(server.Requests().empty());  // what it wrote, at the version the server gave
  REQUIRE(mine.PutValveRecord("[1,2]", known->resource_version).ok());  // PUT at that version

  // Another replica writes in between: our remembered version is stale, the
  // PUT is refused (409, as kube-apiserver does), and the next read is live.
  auto theirs = KubeNodeApi::Create(f.config, Unpaced(), f.clock, f.metrics);
  REQUIRE(theirs.ok());
  Result<SharedRecord> live = (*theirs)->GetValveRecord();
  REQUIRE(live.ok());
  REQUIRE((*theirs)->PutValveRecord("[1,2,3]", live->resource_version).ok());
  Result<SharedRecord> stale = mine.GetValveRecord();
  REQUIRE(stale.ok());
  CHECK(stale->value == "[1,2]");
  CHECK(mine.PutValveRecord("[1,2,4]", stale->resource_version).code() == StatusCode::kAborted);
  server.ClearRequests();
  Result<SharedRecord> again = mine.GetValveRecord();
  REQUIRE(again.ok());
  CHECK(again->value == "[1,2,3]");
  CHECK(server.CountRequests("GET", "/apis/coordination.k8s.io/") == 1);
  CHECK(mine.PutValveRecord("[1,2,3,4]", again->resource_version).ok());
}

TEST_CASE(
    "a lift costs 5 API requests: the node read once, patched, its conditions patched, "
    "two Events") {
  Tainter::Options topts;
  topts.policy.max_new_taints = 0;
  CostFixture c(topts);
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  FaultEvent e = TaintEvent("gpu-0", c.f.clock);
  e.expire = std::chrono::minutes(1);
  tainter->Handle(e);
  REQUIRE(tainter->policy().tainted_nodes() == 1);

  api_server.ClearRequests();
  c.f.clock.Advance(std::chrono::minutes(2));  // past expire, before the 5 min resync
  tainter->Tick();                             // the reason expired: the taint is lifted
  CHECK(tainter->policy().tainted_nodes() == 0);
  CHECK(
      api_server.GetNodeJson("gpu-0")->at("spec").value("taints", nlohmann::json::array()).empty());
  // Read once (is the lift still due? another replica may have extended a
  // reason), patched against that read's resourceVersion (no second GET:
  // a node that moved since fails the patch's test and is read and judged
  // again), its conditions set False from the same read (a node patch never
  // changes its status), two Events (the reason's recovery, the lift).
  // Before: a GET before the patch and one before the conditions made it 7.
  CHECK(api_server.CountRequests("GET", "/api/v1/nodes/") == 1);
  CHECK(api_server.CountRequests("PATCH", "/api/v1/nodes/") == 2);  // node and its status
  CHECK(api_server.CountRequests("POST", "/api/v1/namespaces/default/events") == 2);
  CHECK(api_server.Requests().size() == 5);
}

TEST_CASE(
    "in a storm the pod listing is shared: past pod_events.node_lists_per_minute a taint costs 5 "
    "requests, and one listing of the cluster's pods serves the waiting taints") {
  Tainter::Options topts;
  topts.policy.max_fraction = 1.0;
  topts.policy.per_rule_max_fraction = 1.0;
  topts.policy.max_new_taints = 0;
  topts.pod_events.node_lists_per_minute = 2;
  CostFixture c(topts);
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  for (int i = 0; i < 12; ++i) {
    const std::string n = std::to_string(i);
    api_server.PutPodJson(
        {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "w-" + n}, {"namespace", "ml"}, {"uid", "u-" + n}}},
         {"spec", {{"nodeName", "gpu-" + n}}},
         {"status", {{"phase", "Running"}}}});
  }

  api_server.ClearRequests();
  for (int i = 0; i < 12; ++i) tainter->Handle(TaintEvent("gpu-" + std::to_string(i), c.f.clock));
  REQUIRE(tainter->policy().tainted_nodes() == 12);
  CHECK(api_server.CountRequests("GET", "/api/v1/pods") == 2);  // the first two, by node
  c.f.clock.Advance(std::chrono::seconds(10));                  // pod_events.batch_delay
  tainter->Tick();
  // One more listing, of every running pod (no spec.nodeName), for the ten waiting.
  CHECK(api_server.CountRequests("GET", "/api/v1/pods") == 3);
  const auto requests = api_server.Requests();
  CHECK(requests.back().path == "/api/v1/namespaces/ml/events");
  std::size_t pod_events = 0;
  for (const auto& r : requests) pod_events += r.path == "/api/v1/namespaces/ml/events";
  CHECK(pod_events == 12);  // every pod told
  // Per taint, as the double counted: the lease written, the node read and
  // patched, its conditions, its Event (5), plus 3 listings for 12.
  CHECK(requests.size() - pod_events <= 12 * 5 + 3 + 1 + 1);  // + the lease's first read, creation
}

}  // namespace
}  // namespace faultline
