// SPDX-License-Identifier: Apache-2.0
// Telling the job (issue 15): the pod Events of a new taint, built
// (BuildPodEvents) and applied by the Tainter after the taint.
#include "tainter/core/pod_events.h"

#include <set>

#include <doctest/doctest.h>

#include "tainter/apply/node_applier.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_node_api.h"
#include "tests/fakes/sample_event.h"

namespace faultline {
namespace {

PodInfo Pod(const std::string& ns, const std::string& name, const std::string& node,
            const std::string& api_version = "", const std::string& kind = "",
            const std::string& owner = "") {
  PodInfo p;
  p.namespace_name = ns;
  p.name = name;
  p.uid = "uid-" + name;
  p.node_name = node;
  p.owner_api_version = api_version;
  p.owner_kind = kind;
  p.owner_name = owner;
  return p;
}

Reason Xid79() {
  Reason r;
  r.rule = "nvidia.xid";
  r.summary = "Xid 79, GPU fell off the bus";
  return r;
}

TEST_CASE("each pod on the node gets a Warning Event naming the node, the fault and its owner") {
  const std::vector<PodInfo> pods = {
      Pod("ml", "train-llm-worker-17", "gpu-17", "kubeflow.org/v1", "PyTorchJob", "train-llm"),
      Pod("hpc", "mpi-run-worker-3", "gpu-17", "kubeflow.org/v2beta1", "MPIJob", "mpi-run"),
      // A JobSet's pods are owned by its child Job.
      Pod("ml", "llama-slice-0-1-abcde", "gpu-17", "batch/v1", "Job", "llama-slice-0"),
      Pod("dev", "notebook", "gpu-17"),  // no controller
  };
  PodEventPlan plan = BuildPodEvents("gpu-17", Xid79(), pods, 50);
  REQUIRE(plan.events.size() == 4);
  // Ordered by namespace/name.
  CHECK(plan.events[0].subject->name == "notebook");
  CHECK(plan.events[1].subject->name == "mpi-run-worker-3");
  CHECK(plan.events[2].subject->name == "llama-slice-0-1-abcde");
  CHECK(plan.events[3].subject->name == "train-llm-worker-17");
  const std::string base =
      "node gpu-17 taken out of scheduling: Xid 79, GPU fell off the bus (rule nvidia.xid)";
  CHECK(plan.events[0].message == base);
  CHECK(plan.events[1].message == base + "; this pod of MPIJob/mpi-run ran there");
  CHECK(plan.events[2].message == base + "; this pod of Job/llama-slice-0 ran there");
  CHECK(plan.events[3].message == base + "; this pod of PyTorchJob/train-llm ran there");
  for (const NodeEvent& e : plan.events) {
    CHECK(e.type == "Warning");
    CHECK(e.reason == "FaultlineNodeTakenOut");
    CHECK(e.node == "gpu-17");
    REQUIRE(e.subject.has_value());
    CHECK(e.subject->kind == "Pod");
    CHECK(e.subject->api_version == "v1");
    CHECK(e.subject->uid == "uid-" + e.subject->name);
  }
  CHECK(plan.events[3].subject->namespace_name == "ml");
}

TEST_CASE("DaemonSet and static pods are node infrastructure, not told") {
  const std::vector<PodInfo> pods = {
      Pod("faultline", "faultline-agent-x1", "gpu-17", "apps/v1", "DaemonSet", "faultline-agent"),
      Pod("kube-system", "kube-proxy-gpu-17", "gpu-17", "v1", "Node", "gpu-17"),
      Pod("ml", "train-llm-worker-17", "gpu-17", "kubeflow.org/v1", "PyTorchJob", "train-llm"),
  };
  PodEventPlan plan = BuildPodEvents("gpu-17", Xid79(), pods, 50);
  REQUIRE(plan.events.size() == 1);
  CHECK(plan.events[0].subject->name == "train-llm-worker-17");
  CHECK(plan.infrastructure == 2);
}

TEST_CASE("at most max_pods pods are told, the rest are counted, the choice is stable") {
  std::vector<PodInfo> pods;
  for (int i = 9; i >= 0; --i) pods.push_back(Pod("ml", "w-" + std::to_string(i), "gpu-1"));
  pods.push_back(Pod("ml", "elsewhere", "gpu-2"));  // not on the node: never told
  PodEventPlan plan = BuildPodEvents("gpu-1", Xid79(), pods, 3);
  REQUIRE(plan.events.size() == 3);
  CHECK(plan.over_bound == 7);
  CHECK(plan.events[0].subject->name == "w-0");
  CHECK(plan.events[2].subject->name == "w-2");
}

TEST_CASE("a summary-less reason names its rule") {
  Reason r;
  r.rule = "ib.port-down";
  CHECK(TakenOutMessage("gpu-3", r) == "node gpu-3 taken out of scheduling: ib.port-down");
}

struct Fixture {
  explicit Fixture(Tainter::Options options = {}) {
    for (int i = 0; i < 10; ++i) api.AddNode("gpu-" + std::to_string(i), {{"gpu", "true"}});
    api.AddPod(
        Pod("ml", "train-llm-worker-3", "gpu-3", "kubeflow.org/v1", "PyTorchJob", "train-llm"));
    api.AddPod(
        Pod("ml", "train-llm-worker-4", "gpu-4", "kubeflow.org/v1", "PyTorchJob", "train-llm"));
    api.AddPod(Pod("ml", "finished", "gpu-3"), "Succeeded");
    auto t = Tainter::Create(std::move(options), ApplierApis{api, api, &api}, metrics, clock);
    REQUIRE(t.ok());
    tainter = std::move(*t);
    REQUIRE(tainter->AdoptAll().ok());
  }
  FaultEvent Ev(const std::string& node, const std::string& id = "ev-1") {
    FaultEvent e = SampleEvent(node, id, clock.Now());
    e.summary = "Xid 79, GPU fell off the bus";
    return e;
  }
  std::vector<NodeEvent> PodEvents() const {
    std::vector<NodeEvent> out;
    for (const NodeEvent& e : api.events()) {
      if (e.subject) out.push_back(e);
    }
    return out;
  }
  FakeClock clock;
  FakeNodeApi api;
  MetricsRegistry metrics;
  std::unique_ptr<Tainter> tainter;
};

TEST_CASE("a new taint tells the node's running pods, after the taint and the node's Event") {
  Fixture f;
  f.tainter->Handle(f.Ev("gpu-3"));
  CHECK(f.api.HasTaint("gpu-3", "faultline.dev/faulty", "NoSchedule"));
  std::vector<NodeEvent> all = f.api.events();
  REQUIRE(all.size() == 2);
  CHECK(!all[0].subject);  // FaultlineTainted on the node first
  CHECK(all[0].reason == "FaultlineTainted");
  REQUIRE(all[1].subject.has_value());
  CHECK(all[1].subject->name == "train-llm-worker-3");  // the finished pod is not listed
  CHECK(all[1].message ==
        "node gpu-3 taken out of scheduling: Xid 79, GPU fell off the bus (rule nvidia.xid); "
        "this pod of PyTorchJob/train-llm ran there");
  CHECK(f.metrics.CounterValue("faultline_tainter_pod_events_total", {{"outcome", "recorded"}}) ==
        1);

  SUBCASE("a repeat of the fault (reasons refreshed, no new taint) tells nobody again") {
    f.clock.Advance(std::chrono::minutes(20));
    f.tainter->Handle(f.Ev("gpu-3", "ev-2"));
    CHECK(f.PodEvents().size() == 1);
  }
}

TEST_CASE("pod Events are off when disabled, and a failing pod list never holds the taint") {
  SUBCASE("disabled") {
    Tainter::Options o;
    o.pod_events.enabled = false;
    Fixture f(o);
    f.tainter->Handle(f.Ev("gpu-3"));
    CHECK(f.api.HasTaint("gpu-3", "faultline.dev/faulty", "NoSchedule"));
    CHECK(f.PodEvents().empty());
    CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 0);
  }
  SUBCASE("the list fails: logged and counted, not retried, the node's queue is free") {
    Fixture f;
    f.api.FailNext(UnavailableError("apiserver away"), FakeNodeApi::Op::kListPods);
    bool done = false;
    f.tainter->Handle(f.Ev("gpu-3"), [&] { done = true; });
    CHECK(done);
    CHECK(f.api.HasTaint("gpu-3", "faultline.dev/faulty", "NoSchedule"));
    CHECK(f.PodEvents().empty());
    CHECK(f.tainter->pending() == 0);
    CHECK(f.metrics.CounterValue("faultline_tainter_pod_events_total",
                                 {{"outcome", "list_failed"}}) == 1);
  }
  SUBCASE("an Event refused: the others are still told") {
    Fixture f;
    f.api.AddPod(Pod("ml", "a-first", "gpu-3"));
    f.api.FailNext(OkStatus(), FakeNodeApi::Op::kEvent);  // the node's Event goes through
    f.api.FailNext(InvalidArgumentError("422"), FakeNodeApi::Op::kEvent);
    f.tainter->Handle(f.Ev("gpu-3"));
    REQUIRE(f.PodEvents().size() == 1);
    CHECK(f.PodEvents()[0].subject->name == "train-llm-worker-3");
    CHECK(f.metrics.CounterValue("faultline_tainter_pod_events_total", {{"outcome", "failed"}}) ==
          1);
  }
}

TEST_CASE("a storm: past node_lists_per_minute the new taints share one listing, all pods told") {
  Tainter::Options o;
  o.policy.max_fraction = 1.0;
  o.policy.per_rule_max_fraction = 1.0;
  o.policy.max_new_taints = 0;
  o.pod_events.node_lists_per_minute = 2;
  Fixture f(o);
  f.api.AddPod(Pod("ml", "train-llm-worker-6", "gpu-6", "kubeflow.org/v1", "PyTorchJob", "x"));
  f.api.AddPod(Pod("ml", "train-llm-worker-7", "gpu-7", "kubeflow.org/v1", "PyTorchJob", "x"));
  // Few nodes: each one's pods listed by node, told at once.
  f.tainter->Handle(f.Ev("gpu-3", "ev-3"));
  f.tainter->Handle(f.Ev("gpu-0", "ev-0"));
  CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 2);
  REQUIRE(f.PodEvents().size() == 1);
  // Past the budget: the next taints wait for one shared listing.
  for (int i : {4, 5, 6, 7}) {
    f.tainter->Handle(f.Ev("gpu-" + std::to_string(i), "ev-" + std::to_string(i)));
  }
  CHECK(f.api.HasTaint("gpu-7", "faultline.dev/faulty", "NoSchedule"));  // never held back
  CHECK(f.PodEvents().size() == 1);
  f.clock.Advance(std::chrono::seconds(5));
  f.tainter->Tick();
  CHECK(f.PodEvents().size() == 1);  // within batch_delay: still waiting
  f.clock.Advance(std::chrono::seconds(5));
  f.tainter->Tick();
  CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 3);  // one listing for the four nodes
  std::set<std::string> told;
  for (const NodeEvent& e : f.PodEvents()) told.insert(e.subject->name);
  CHECK(told == std::set<std::string>{"train-llm-worker-3", "train-llm-worker-4",
                                      "train-llm-worker-6", "train-llm-worker-7"});
  CHECK(f.metrics.CounterValue("faultline_tainter_pod_events_total", {{"outcome", "recorded"}}) ==
        4);
  f.tainter->Tick();
  CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 3);  // nothing waits: no listing

  SUBCASE("a quiet minute later, a new taint is listed by node again, at once") {
    f.clock.Advance(std::chrono::minutes(1));
    f.api.AddPod(Pod("ml", "late", "gpu-8"));
    f.tainter->Handle(f.Ev("gpu-8", "ev-8"));
    CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 4);
    CHECK(f.PodEvents().size() == 5);
  }
  SUBCASE("the shared listing fails: each waiting node counted, none retried") {
    f.clock.Advance(std::chrono::seconds(1));
    f.tainter->Handle(f.Ev("gpu-8", "ev-8"));
    f.tainter->Handle(f.Ev("gpu-9", "ev-9"));
    f.api.FailNext(UnavailableError("apiserver away"), FakeNodeApi::Op::kListPods);
    f.clock.Advance(std::chrono::seconds(10));
    f.tainter->Tick();
    CHECK(f.metrics.CounterValue("faultline_tainter_pod_events_total",
                                 {{"outcome", "list_failed"}}) == 2);
    f.clock.Advance(std::chrono::seconds(10));
    f.tainter->Tick();
    CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 4);
  }
}

TEST_CASE("fewer waiting nodes than the last shared listing had pages: a list per node instead") {
  Tainter::Options o;
  o.policy.max_fraction = 1.0;
  o.policy.per_rule_max_fraction = 1.0;
  o.policy.max_new_taints = 0;
  o.pod_events.node_lists_per_minute = 0;  // always wait
  Fixture f(o);
  // 1,200 running pods elsewhere: the shared listing costs 3 pages of 500.
  for (int i = 0; i < 1200; ++i) f.api.AddPod(Pod("web", "w-" + std::to_string(i), "gpu-9"));
  for (int i : {3, 0, 1, 2}) {
    f.tainter->Handle(f.Ev("gpu-" + std::to_string(i), "ev-" + std::to_string(i)));
  }
  f.clock.Advance(std::chrono::seconds(10));
  f.tainter->Tick();
  CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 1);  // 4 nodes > 0 pages known: shared
  REQUIRE(f.PodEvents().size() == 1);
  f.tainter->Handle(f.Ev("gpu-4", "ev-4"));
  f.tainter->Handle(f.Ev("gpu-5", "ev-5"));
  f.clock.Advance(std::chrono::seconds(10));
  f.tainter->Tick();
  CHECK(f.api.calls(FakeNodeApi::Op::kListPods) == 3);  // 2 nodes <= 3 pages: one list each
  REQUIRE(f.PodEvents().size() == 2);
  CHECK(f.PodEvents()[1].subject->name == "train-llm-worker-4");
}

}  // namespace
}  // namespace faultline
