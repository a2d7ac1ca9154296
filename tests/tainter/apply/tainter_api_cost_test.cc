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
// tests /metadata/resourceVersion is refused with 422 when the node moved
// (kube-apiserver answers a JSON patch it cannot apply to the object, a
// failed `test` among them, with 422 Unprocessable Entity since
// kubernetes/kubernetes#68346; 500 before); a list and a watch from its
// resourceVersion deliver every node and each later change; every request
// is recorded with its method, path and the status answered.
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tainter/core/reasons.h"
#include "tainter/core/valve.h"
#include "tainter/kube/kube_node_json.h"
#include "tainter/watch/node_informer.h"
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

// A valve that admits every taint: these tests count requests, not refusals.
Tainter::Options UnlimitedValve() {
  Tainter::Options topts;
  topts.policy.max_fraction = 1.0;
  topts.policy.per_rule_max_fraction = 1.0;
  topts.policy.max_new_taints = 0;
  return topts;
}

TEST_CASE(
    "in a storm the pod listing is shared: past pod_events.node_lists_per_minute a taint costs 5 "
    "requests, and one listing of the cluster's pods serves the waiting taints") {
  Tainter::Options topts = UnlimitedValve();
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

std::size_t TaintedOnServer(FakeApiServer& server) {
  std::size_t n = 0;
  for (int i = 0; i < 20; ++i) {
    const nlohmann::json node = *server.GetNodeJson("gpu-" + std::to_string(i));
    n += !node["spec"].value("taints", nlohmann::json::array()).empty();
  }
  return n;
}

TEST_CASE(
    "new taints decided together share the valve Lease's writes: 12 held taints cost 2 Lease "
    "writes (10 a write), not 12, and nothing is written before ReserveHeld") {
  Tainter::Options topts = UnlimitedValve();
  topts.pod_events.enabled = false;
  CostFixture c(topts);
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  tainter->Handle(TaintEvent("gpu-0", c.f.clock));  // alone (no hold): creates the Lease
  REQUIRE(tainter->policy().tainted_nodes() == 1);

  api_server.ClearRequests();
  tainter->HoldReservations();
  for (int i = 1; i <= 12; ++i) tainter->Handle(TaintEvent("gpu-" + std::to_string(i), c.f.clock));
  CHECK(api_server.Requests().empty());  // held: decided in memory, nothing written yet
  CHECK(tainter->pending() == 12);
  tainter->ReserveHeld();
  CHECK(tainter->pending() == 0);
  CHECK(TaintedOnServer(api_server) == 13);
  // Before: one Lease PUT per taint (12), so 4 requests a taint; now 3 + 2/12.
  CHECK(api_server.CountRequests("PUT", "/apis/coordination.k8s.io/") == 2);
  CHECK(api_server.CountRequests("GET", "/apis/coordination.k8s.io/") ==
        0);                                                              // known since its write
  CHECK(api_server.CountRequests("PATCH", "/api/v1/nodes/") == 12 * 2);  // nodes read before: GETs
  CHECK(api_server.CountRequests("POST", "/api/v1/namespaces/default/events") == 12);
  // A group's taints first (the first Lease write, then its 10 node writes),
  // then their conditions and Events: the last taint of a group reaches its
  // node 10 writes after its reservation, however many pods it has to tell.
  // (Each node is read first here: no watch, so no picture.)
  const auto requests = api_server.Requests();
  REQUIRE(!requests.empty());
  CHECK(requests[0].method == "PUT");
  std::size_t node_writes_first = 0;
  for (const auto& r : requests) {
    if (r.method != "PATCH") continue;
    if (r.path.find("/status") != std::string::npos) break;
    ++node_writes_first;
  }
  CHECK(node_writes_first == 10);
  Result<SharedRecord> record = c.f.Api().GetValveRecord();
  REQUIRE(record.ok());
  CHECK(FleetValve::DecodeRecord(record->value).size() == 13);  // every taint's place
  // Outside the bracket a new taint writes the Lease on its own, as before.
  api_server.ClearRequests();
  tainter->Handle(TaintEvent("gpu-13", c.f.clock));
  CHECK(api_server.CountRequests("PUT", "/apis/coordination.k8s.io/") == 1);
}

TEST_CASE(
    "held taints whose Lease write fails wait their backoff and are then reserved one by one, "
    "none lost") {
  Tainter::Options topts = UnlimitedValve();
  topts.pod_events.enabled = false;
  CostFixture c(topts);
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  tainter->Handle(TaintEvent("gpu-0", c.f.clock));  // the Lease exists
  // Every Lease write answered 503 (the client's own retries included).
  api_server.FailNext(100, 503, "PUT", "/apis/coordination.k8s.io/");
  tainter->HoldReservations();
  for (int i = 1; i <= 3; ++i) tainter->Handle(TaintEvent("gpu-" + std::to_string(i), c.f.clock));
  tainter->ReserveHeld();
  CHECK(TaintedOnServer(api_server) == 1);
  CHECK(tainter->pending() == 3);  // kept, in their node queues
  api_server.ClearFaults();
  c.f.clock.Advance(std::chrono::minutes(2));  // past every backoff
  api_server.ClearRequests();
  tainter->Tick();
  CHECK(tainter->pending() == 0);
  CHECK(TaintedOnServer(api_server) == 4);
  CHECK(api_server.CountRequests("PUT", "/apis/coordination.k8s.io/") == 3);  // alone, outside
}

TEST_CASE(
    "two replicas reserving held taints at once never exceed the valve: the one whose Lease "
    "write lost (409) judges its whole group again and is refused what the other took") {
  Tainter::Options topts;
  topts.policy.max_fraction = 0.25;  // 5 of 20
  topts.policy.per_rule_max_fraction = 0.25;
  topts.policy.max_new_taints = 0;
  topts.pod_events.enabled = false;
  CostFixture a(topts);  // replica A, on the API double of...
  FakeApiServer& api_server = a.api_server;
  // ...replica B: its own client and tainter on the same API server.
  MetricsRegistry b_metrics;
  auto b_api = KubeNodeApi::Create(a.f.config, Unpaced(), a.f.clock, b_metrics);
  REQUIRE(b_api.ok());
  auto b_created = Tainter::Create(topts, ApplierApis::All(**b_api), b_metrics, a.f.clock);
  REQUIRE(b_created.ok());
  Tainter& b = **b_created;
  REQUIRE(b.AdoptAll().ok());
  Tainter& ta = *a.tainter;
  a.f.clock.Advance(std::chrono::seconds(1));  // both read the nodes before any reservation

  // B taints gpu-19 (it creates the Lease and, after its own write, knows it).
  b.Handle(TaintEvent("gpu-19", a.f.clock));
  REQUIRE(TaintedOnServer(api_server) == 1);
  // A holds 5 (its memory knows no taint), reserves them in one write: the
  // record's gpu-19 (reserved after A read it: a taint on its way) leaves 4.
  ta.HoldReservations();
  for (int i = 0; i < 5; ++i) ta.Handle(TaintEvent("gpu-" + std::to_string(i), a.f.clock));
  ta.ReserveHeld();
  CHECK(TaintedOnServer(api_server) == 5);
  CHECK(ta.policy().tainted_nodes() == 4);
  // B holds 4 more (its memory: 1 of 5) and judges them first against the
  // Lease as it wrote it, stale now: its write is refused (409), it reads
  // the Lease again and judges the group afresh: all 4 refused.
  api_server.ClearRequests();
  b.HoldReservations();
  for (int i = 10; i < 14; ++i) b.Handle(TaintEvent("gpu-" + std::to_string(i), a.f.clock));
  b.ReserveHeld();
  std::vector<int> lease_puts;
  for (const auto& r : api_server.Requests()) {
    if (r.method == "PUT" && r.path.find("/leases/") != std::string::npos) {
      lease_puts.push_back(r.status);
    }
  }
  REQUIRE(lease_puts.size() == 1);
  CHECK(lease_puts[0] == 409);
  CHECK(api_server.CountRequests("GET", "/apis/coordination.k8s.io/") == 1);
  CHECK(TaintedOnServer(api_server) == 5);  // the limit, exactly: neither more nor less
  CHECK(b.policy().tainted_nodes() == 1);
  CHECK(b.parked() == 4);  // refused, waiting for a free place
  CHECK(b_metrics.CounterValue("faultline_tainter_taints_refused_total",
                               {{"rule", "storm.link_down"}}) == 4);
}

TEST_CASE(
    "UpdateNode from a picture: a moved node is kAborted without a read, and a change in effect on "
    "the picture only is read and written, never taken as done") {
  KubeFixture f{Unpaced()};
  FakeApiServer& server = *f.server;
  server.AddNode("gpu-0", {{"gpu", "true"}});
  Result<NodeInfo> seen = NodeInfoFromJson(*server.GetNodeJson("gpu-0"));
  REQUIRE(seen.ok());
  NodeBase base{*seen, /*has_labels=*/true, /*has_annotations=*/false};
  NodeChange change;
  change.add_taint = OurTaint();
  change.expected_resource_version = base.node.resource_version;
  change.base = &base;

  // Another writer after the picture: the test fails (422), nothing is read.
  server.AddForeignTaint("gpu-0", "example.com/maintenance", "", "NoSchedule");
  server.ClearRequests();
  CHECK(f.Api().UpdateNode("gpu-0", change).code() == StatusCode::kAborted);
  REQUIRE(server.Requests().size() == 1);
  CHECK(server.Requests()[0].method == "PATCH");
  CHECK(server.Requests()[0].status == 422);

  // A picture that already shows our taint (stale: the node has it not).
  seen = NodeInfoFromJson(*server.GetNodeJson("gpu-0"));
  REQUIRE(seen.ok());
  base.node = *seen;
  base.node.taints.push_back(OurTaint());
  change.expected_resource_version = base.node.resource_version;
  server.ClearRequests();
  CHECK(f.Api().UpdateNode("gpu-0", change).ok());
  CHECK(server.CountRequests("GET", "/api/v1/nodes/gpu-0") == 1);
  CHECK(server.CountRequests("PATCH", "/api/v1/nodes/gpu-0") == 1);
  const nlohmann::json taints = (*server.GetNodeJson("gpu-0"))["spec"]["taints"];
  CHECK(taints.size() == 2);  // the foreign one and ours
}

// The daemon's way: the nodes listed and watched by a NodeInformer (through
// a client of its own, on its thread), their changes handed to the tainter.
struct WatchedCostFixture {
  KubeFixture f{Unpaced()};
  FakeApiServer& api_server = *f.server;
  std::unique_ptr<KubeNodeApi> watch_api;
  std::unique_ptr<NodeInformer> informer;
  std::unique_ptr<Tainter> tainter;

  explicit WatchedCostFixture(const Tainter::Options& options) {
    SetLogLevel(LogLevel::kWarning);
    for (int i = 0; i < 20; ++i) api_server.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
    auto made = KubeNodeApi::Create(f.config, Unpaced(), f.clock, f.metrics);
    REQUIRE(made.ok());
    watch_api = std::move(*made);
    informer = std::make_unique<NodeInformer>(
        *watch_api,
        NodeInformer::Options{.selector = "gpu=true",
                              .watch_timeout = std::chrono::seconds(5),
                              .retry_delay = std::chrono::milliseconds(100)},
        f.metrics);
    auto created = Tainter::Create(options, ApplierApis::All(f.Api()), f.metrics, f.clock);
    REQUIRE(created.ok());
    tainter = std::move(*created);
    tainter->set_watched(true);
    informer->Start();
    std::vector<NodeInformer::Change> changes;
    REQUIRE(TakeChangesUntil(*informer, changes, [&] {
      return !changes.empty() && changes.back().kind == NodeInformer::Change::Kind::kList;
    }));
    tainter->Observe(std::move(changes));
    REQUIRE(tainter->adopted());
  }
  ~WatchedCostFixture() { informer->Stop(); }
};

Tainter::Options NoPodEvents() {
  Tainter::Options topts;
  topts.policy.max_fraction = 0.2;  // 4 of 20
  topts.policy.per_rule_max_fraction = 0.2;
  topts.policy.max_new_taints = 0;
  topts.pod_events.enabled = false;  // the pod listing is counted by the test above
  return topts;
}

TEST_CASE(
    "a node the watch already showed costs 4 API requests to taint: the valve Lease written, "
    "the node patched from the watch's picture (no GET), its conditions, its Event") {
  WatchedCostFixture c(NoPodEvents());
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  // Another controller's annotation and label on gpu-2, seen by the watch:
  // the patch from the picture (which keeps only our keys of those maps)
  // must add ours beside them, never replace the maps.
  api_server.MutateNode("gpu-2", [](nlohmann::json& n) {
    n["metadata"]["annotations"] = {{"example.com/owner", "team-a"}};
    n["metadata"]["labels"]["example.com/rack"] = "r7";
  });
  std::vector<NodeInformer::Change> changes;
  REQUIRE(TakeChangesUntil(*c.informer, changes, [&] {
    return !changes.empty() && changes.back().objects.at(0).annotations.count("example.com/owner");
  }));
  tainter->Observe(std::move(changes));

  tainter->Handle(TaintEvent("gpu-0", c.f.clock));  // the first creates the valve Lease
  REQUIRE(tainter->policy().tainted_nodes() == 1);
  api_server.ClearRequests();
  tainter->Handle(TaintEvent("gpu-1", c.f.clock));
  tainter->Handle(TaintEvent("gpu-2", c.f.clock));
  CHECK(tainter->policy().tainted_nodes() == 3);
  // Before: a GET of each node ahead of its patch (its live reasons and
  // resourceVersion) made it 5.
  CHECK(api_server.CountRequests("GET", "/api/v1/nodes/") == 0);
  CHECK(api_server.CountRequests("PATCH", "/api/v1/nodes/") == 2 * 2);  // node and its status
  CHECK(api_server.CountRequests("PUT", "/apis/coordination.k8s.io/") == 2);
  CHECK(api_server.CountRequests("POST", "/api/v1/namespaces/default/events") == 2);
  CHECK(api_server.Requests().size() == 2 * 4);
  for (const auto& r : api_server.Requests()) CHECK(r.status < 300);  // nothing refused

  for (const char* name : {"gpu-1", "gpu-2"}) {
    const nlohmann::json node = *api_server.GetNodeJson(name);
    CHECK(node["spec"]["taints"].size() == 1);
    REQUIRE(node["metadata"]["annotations"].contains("faultline.dev/reasons"));
    CHECK(node["metadata"]["annotations"]["faultline.dev/reasons"].get<std::string>().find(
              "storm.link_down") != std::string::npos);
  }
  const nlohmann::json two = *api_server.GetNodeJson("gpu-2");
  CHECK(two["metadata"]["annotations"]["example.com/owner"] == "team-a");
  CHECK(two["metadata"]["labels"]["example.com/rack"] == "r7");
  CHECK(two["metadata"]["labels"]["gpu"] == "true");
  // The conditions were written from the picture's too (no GET for them).
  bool fault_condition = false;
  for (const auto& cond : two["status"].value("conditions", nlohmann::json::array())) {
    fault_condition |= cond.value("status", "") == "True";
  }
  CHECK(fault_condition);
}

TEST_CASE(
    "a node another replica changed after the watch's picture keeps that replica's reasons: "
    "the patch's test fails (422), the node is read and the merge written") {
  WatchedCostFixture c(NoPodEvents());
  FakeApiServer& api_server = c.api_server;
  Tainter* tainter = c.tainter.get();
  tainter->Handle(TaintEvent("gpu-0", c.f.clock));  // the valve Lease exists
  // Another replica taints gpu-3 for its own reason; the watch has not
  // delivered it (its changes are not taken): the picture is stale.
  Reason theirs;
  theirs.rule = "other.xid_79";
  theirs.summary = "GPU fell off the bus";
  theirs.first_seen = theirs.last_seen = c.f.clock.Now();
  api_server.MutateNode("gpu-3", [&](nlohmann::json& n) {
    n["spec"]["taints"] = nlohmann::json::array(
        {{{"key", "faultline.dev/faulty"}, {"value", "true"}, {"effect", "NoSchedule"}}});
    n["metadata"]["annotations"] = {{"faultline.dev/reasons", EncodeReasons({theirs})}};
  });
  api_server.ClearRequests();
  tainter->Handle(TaintEvent("gpu-3", c.f.clock));

  const nlohmann::json node = *api_server.GetNodeJson("gpu-3");
  CHECK(node["spec"]["taints"].size() == 1);  // theirs, not a second one
  const std::string reasons = node["metadata"]["annotations"]["faultline.dev/reasons"];
  CHECK(reasons.find("other.xid_79") != std::string::npos);  // kept
  CHECK(reasons.find("storm.link_down") != std::string::npos);
  // The picture's patch refused (422), one GET, the merged patch applied.
  std::vector<int> node_patches;
  for (const auto& r : api_server.Requests()) {
    if (r.method == "PATCH" && r.path == "/api/v1/nodes/gpu-3") node_patches.push_back(r.status);
  }
  REQUIRE(node_patches.size() == 2);
  CHECK(node_patches[0] == 422);
  CHECK(node_patches[1] == 200);
  CHECK(api_server.CountRequests("GET", "/api/v1/nodes/gpu-3") == 1);
  CHECK(c.f.metrics.CounterValue("faultline_kube_conflicts_total") >= 1);
  // The picture is used once: the next write to gpu-3, before the watch
  // brings the node again, reads it first (no stale patch refused again).
  api_server.ClearRequests();
  FaultEvent again = TaintEvent("gpu-3", c.f.clock);
  again.id = "storm-gpu-3-again";
  again.rule = "storm.link_flap";
  tainter->Handle(again);
  CHECK(api_server.CountRequests("GET", "/api/v1/nodes/gpu-3") == 1);
  for (const auto& r : api_server.Requests()) CHECK(r.status < 300);
}

}  // namespace
}  // namespace faultline
