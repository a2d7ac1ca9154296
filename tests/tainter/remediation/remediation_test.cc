// SPDX-License-Identifier: Apache-2.0
// Cordon, drain and uncordon (tainter/remediation/remediation.h) over HTTPS against the
// API double. Each API semantic a test relies on is written beside it.
#include "tainter/remediation/remediation.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/time_format.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/kube/eviction.h"
#include "tainter/kube/node_pods.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::seconds;

// The tainter's side, as the Remediator reads it: which nodes carry
// faultline's taint and with which rules. Rule "x.cordon" is in category
// "hardware", "x.drain" in "storage", "x.taint" in "application".
struct Harness {
  explicit Harness(RemediationOptions o = Defaults()) {
    KubeHttpClient::Options http;
    http.sleep = [this](std::chrono::nanoseconds d) { f.clock.Advance(d); };
    http.jitter_seed = 7;
    auto made = KubeEvictionApi::Create(f.config, http, f.clock, f.metrics);
    REQUIRE_MESSAGE(made.ok(), made.status().ToString());
    evictions = std::move(*made);
    remediator = std::make_unique<Remediator>(std::move(o), View(), *evictions, f.Api(), f.Api(),
                                              f.metrics, f.clock);
  }
  // The tainter's side as this harness holds it (a restarted Remediator
  // reads the same).
  Remediator::View View() {
    Remediator::View view;
    view.ready = [] { return true; };
    view.tainted_nodes = [this] {
      std::vector<std::string> out;
      for (const auto& [node, rules] : reasons) out.push_back(node);
      return out;
    };
    view.reasons = [this](const std::string& node) {
      std::vector<Reason> out;
      if (auto it = reasons.find(node); it != reasons.end()) {
        for (const std::string& rule : it->second) {
          Reason r;
          r.rule = rule;
          out.push_back(std::move(r));
        }
      }
      return out;
    };
    view.owns = [this](const std::string& node) { return !other_replica.count(node); };
    view.category = [](const std::string& rule) {
      if (rule == "x.cordon") return std::string("hardware");
      if (rule == "x.drain") return std::string("storage");
      return std::string("application");
    };
    return view;
  }
  static RemediationOptions Defaults() {
    RemediationOptions o;
    o.by_category = {{"hardware", RemediationAction::kCordon},
                     {"storage", RemediationAction::kDrain}};
    o.grace_period = seconds(0);
    o.retry_interval = std::chrono::milliseconds(5000);
    o.max_retry_interval = std::chrono::milliseconds(20000);
    return o;
  }
  json Node(const std::string& name) { return *f.server->GetNodeJson(name); }
  bool Unschedulable(const std::string& name) {
    json n = Node(name);
    return n.contains("spec") && n["spec"].value("unschedulable", false);
  }
  std::string Annotation(const std::string& name, const std::string& key) {
    json n = Node(name);
    if (!n["metadata"].contains("annotations")) return {};
    return n["metadata"]["annotations"].value(key, "");
  }
  void AddPod(const std::string& ns, const std::string& name, const std::string& node,
              json meta = json::object(), std::string phase = "Running") {
    meta["name"] = name;
    meta["namespace"] = ns;
    f.server->PutPodJson({{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"metadata", meta},
                          {"spec", {{"nodeName", node}}},
                          {"status", {{"phase", phase}}}});
  }
  int Evictions(const std::string& ns, const std::string& pod) {
    return f.server->CountRequests("POST",
                                   "/api/v1/namespaces/" + ns + "/pods/" + pod + "/eviction");
  }

  KubeFixture f;
  std::unique_ptr<KubeEvictionApi> evictions;
  std::map<std::string, std::vector<std::string>> reasons;  // node -> active rules
  std::set<std::string> other_replica;                      // nodes another replica decides for
  std::unique_ptr<Remediator> remediator;
};

TEST_CASE("remediation: the action per rule, then per category, default taint") {
  RemediationOptions o;
  CHECK_FALSE(o.Active());  // default: taint only, nothing else happens
  o.by_category["hardware"] = RemediationAction::kDrain;
  o.by_rule["nvidia.xid"] = RemediationAction::kCordon;
  CHECK(o.Active());
  CHECK(o.For("nvidia.xid", "hardware") == RemediationAction::kCordon);  // the rule wins
  CHECK(o.For("nvidia.other", "hardware") == RemediationAction::kDrain);
  CHECK(o.For("app.oom", "application") == RemediationAction::kTaint);

  Result<TainterConfig> c = ParseTainterConfig(R"(
remediation:
  action: taint
  by_category: {hardware: drain}
  by_rule: {nvidia.xid: cordon}
  drain: {grace_period: 0s, max_concurrent: 2, retry_interval: 2s, max_retry_interval: 1m,
          deadline: 45m}
)",
                                               "t.yaml");
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  CHECK(c->remediation.by_category.at("hardware") == RemediationAction::kDrain);
  CHECK(c->remediation.by_rule.at("nvidia.xid") == RemediationAction::kCordon);
  CHECK(c->remediation.grace_period == seconds(0));
  CHECK(c->remediation.max_concurrent_drains == 2);
  CHECK(c->remediation.drain_deadline == std::chrono::minutes(45));
  CHECK(ParseTainterConfig("{}", "t.yaml")->remediation.drain_deadline == std::chrono::minutes(30));
  CHECK(ParseTainterConfig("{}", "t.yaml")->remediation.grace_period == std::nullopt);

  Result<TainterConfig> bad = ParseTainterConfig("remediation: {by_rule: {a: evict}}", "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("'remediation.by_rule.a' must be taint, cordon or drain") !=
        std::string::npos);
}

TEST_CASE("cordon: our cordon is recorded and lifted, someone else's cordon stays") {
  // kube-apiserver: spec.unschedulable is a plain boolean; a JSON merge patch
  // (RFC 7386) sets it, and `null` removes the field (an uncordoned node has
  // none, as after `kubectl uncordon`). Keys the patch does not name (other
  // annotations, spec.taints) are left as they are.
  Harness h;
  h.f.server->AddNode("gpu-1");
  h.f.server->AddNode("gpu-2");
  h.f.server->MutateNode("gpu-2",
                         [](json& n) { n["spec"]["unschedulable"] = true; });  // an operator
  h.reasons["gpu-1"] = {"x.cordon"};
  h.reasons["gpu-2"] = {"x.cordon"};
  h.remediator->Tick();
  CHECK(h.Unschedulable("gpu-1"));
  CHECK_FALSE(h.Annotation("gpu-1", "faultline.dev/cordoned").empty());
  CHECK(h.remediator->Cordoned("gpu-1"));
  CHECK(h.Unschedulable("gpu-2"));
  CHECK(h.Annotation("gpu-2", "faultline.dev/cordoned").empty());  // not ours: not recorded
  CHECK_FALSE(h.remediator->Cordoned("gpu-2"));

  // A taint-only rule never cordons.
  h.f.server->AddNode("gpu-3");
  h.reasons["gpu-3"] = {"x.taint"};
  h.remediator->Tick();
  CHECK_FALSE(h.Unschedulable("gpu-3"));

  // The faults are lifted (expiry or untaint: the reasons are gone).
  h.reasons.clear();
  h.remediator->Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK_FALSE(h.Node("gpu-1")["spec"].contains("unschedulable"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/cordoned").empty());
  CHECK(h.Unschedulable("gpu-2"));  // the operator's cordon stays
  CHECK(h.f.metrics.CounterValue("faultline_tainter_cordons_total", {{"op", "uncordon"}}) == 1);
}

TEST_CASE("cordon: a restarted tainter still lifts its own cordon (the record is on the node)") {
  Harness h;
  h.f.server->AddNode("gpu-1");
  h.reasons["gpu-1"] = {"x.cordon"};
  h.remediator->Tick();
  REQUIRE(h.Unschedulable("gpu-1"));
  // A new process: it learns the cordon from the node list, not from memory.
  Remediator::View view;
  view.ready = [] { return true; };
  view.tainted_nodes = [] { return std::vector<std::string>{}; };  // the fault was lifted meanwhile
  view.reasons = [](const std::string&) { return std::vector<Reason>{}; };
  Remediator restarted(Harness::Defaults(), view, *h.evictions, h.f.Api(), h.f.Api(), h.f.metrics,
                       h.f.clock);
  restarted.Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/cordoned").empty());
}

TEST_CASE("cordon: foreign taints, annotations and cordons survive concurrent writers") {
  // kube-apiserver: a merge patch carrying metadata.resourceVersion is a
  // precondition: when the node moved since that version, the answer is
  // 409 Conflict and nothing is written; the client re-reads and decides
  // again (here at the next tick).
  Harness h;
  h.f.server->AddNode("gpu-1");
  h.f.server->AddForeignTaint("gpu-1", "nvidia.com/gpu", "present", "NoSchedule");
  h.reasons["gpu-1"] = {"x.cordon"};
  // Between our GET and our PATCH another controller adds a taint and an annotation.
  h.f.server->BeforeNextNodeWrite([](FakeApiServer& s) {
    s.MutateNode("gpu-1", [](json& n) {
      n["spec"]["taints"].push_back({{"key", "other/t"}, {"effect", "NoExecute"}});
      n["metadata"]["annotations"]["other/a"] = "1";
    });
  });
  h.remediator->Tick();  // 409: retried after the backoff
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  h.f.clock.Advance(seconds(2));
  h.remediator->Tick();
  CHECK(h.Unschedulable("gpu-1"));
  json n = h.Node("gpu-1");
  CHECK(n["spec"]["taints"].size() == 2);  // both foreign taints kept
  CHECK(n["metadata"]["annotations"]["other/a"] == "1");

  // Someone cordons between our GET and PATCH: the 409 makes us re-read,
  // and then the cordon is theirs: not recorded, so never lifted by us.
  h.f.server->AddNode("gpu-2");
  h.reasons["gpu-2"] = {"x.cordon"};
  h.f.server->BeforeNextNodeWrite([](FakeApiServer& s) {
    s.MutateNode("gpu-2", [](json& node) { node["spec"]["unschedulable"] = true; });
  });
  h.remediator->Tick();
  h.f.clock.Advance(seconds(2));
  h.remediator->Tick();
  CHECK_FALSE(h.remediator->Cordoned("gpu-2"));
  h.reasons.clear();
  h.remediator->Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));  // ours, lifted
  CHECK(h.Unschedulable("gpu-2"));        // theirs, kept
  n = h.Node("gpu-1");
  CHECK(n["spec"]["taints"].size() == 2);
  CHECK(n["metadata"]["annotations"]["other/a"] == "1");
}

TEST_CASE("the API double's eviction subresource answers as kube-apiserver does") {
  // kube-apiserver (pkg/registry/core/pod/storage/eviction.go): POST
  // pods/{name}/eviction with a policy/v1 Eviction. No such pod: 404. A
  // budget selecting the pod with status.disruptionsAllowed 0: 429
  // TooManyRequests, "Cannot evict pod as it would violate the pod's
  // disruption budget.", details.causes[].reason DisruptionBudget, and no
  // Retry-After (NewTooManyRequests(msg, 0)). Allowed: the budget's
  // disruptionsAllowed drops by one, 201, and the pod is deleted with its
  // grace period (deletionTimestamp set meanwhile).
  Harness h;
  h.AddPod("ml", "web-1", "gpu-1", {{"labels", {{"app", "web"}}}});
  h.AddPod("ml", "slow-1", "gpu-1");
  h.f.server->SetDisruptionBudget("ml", "web-pdb", {{"app", "web"}}, 0);
  KubeEvictionApi& api = *h.evictions;
  CHECK(*api.Evict("ml", "missing", std::nullopt) == EvictionOutcome::kGone);
  CHECK(*api.Evict("ml", "web-1", std::nullopt) == EvictionOutcome::kBlockedByBudget);
  for (const auto& r : h.f.server->Requests()) {
    if (r.path.ends_with("/web-1/eviction")) CHECK(r.status == 429);
  }
  h.f.server->SetDisruptionBudget("ml", "web-pdb", {{"app", "web"}}, 1);
  CHECK(*api.Evict("ml", "web-1", seconds(0)) == EvictionOutcome::kEvicted);
  CHECK(h.f.server->DisruptionsAllowed("ml", "web-pdb") == 0);
  CHECK_FALSE(h.f.server->GetPodJson("ml", "web-1"));  // grace 0: gone at once
  // A grace period: the pod is leaving (deletionTimestamp), then gone.
  CHECK(*api.Evict("ml", "slow-1", seconds(1)) == EvictionOutcome::kEvicted);
  auto leaving = h.f.server->GetPodJson("ml", "slow-1");
  REQUIRE(leaving);
  CHECK((*leaving)["metadata"].contains("deletionTimestamp"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  CHECK_FALSE(h.f.server->GetPodJson("ml", "slow-1"));
}

// API semantics relied on (as kube-apiserver): GET /api/v1/pods selects by
// the field selectors spec.nodeName and status.phase (PodToSelectableFields),
// so a finished pod never leaves the server; each list answer is one page here.
TEST_CASE("drain and the pod Events read a node's pods with one and the same listing") {
  Harness h;
  h.AddPod("ml", "train-0", "gpu-1",
           {{"annotations", {{"kubernetes.io/config.mirror", "x"}}},
            {"deletionTimestamp", "2026-11-24T00:00:00Z"}});
  h.AddPod("ml", "done-1", "gpu-1", json::object(), "Succeeded");
  h.AddPod("ml", "train-1", "gpu-2");
  h.f.server->ClearRequests();
  Result<std::vector<PodInfo>> drained = h.evictions->ListPodsOnNode("gpu-1");
  Result<std::vector<PodInfo>> told = ListPodsOnNode(h.f.Api(), "gpu-1");
  REQUIRE(drained.ok());
  REQUIRE(told.ok());
  REQUIRE(drained->size() == 1);  // the finished pod and the other node's stay on the server
  REQUIRE(told->size() == 1);
  CHECK((*drained)[0].name == "train-0");
  CHECK((*told)[0].name == "train-0");
  // What drain reads of a pod comes with the same PodInfo.
  CHECK((*drained)[0].phase == "Running");
  CHECK((*drained)[0].mirror);
  CHECK((*drained)[0].deleting);
  // One request each, the same selector.
  const auto requests = h.f.server->Requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].path == "/api/v1/pods");
  CHECK(requests[1].path == "/api/v1/pods");
  CHECK(requests[0].params.at("fieldSelector") == PodsOnNodeSelector("gpu-1"));
  CHECK(requests[1].params.at("fieldSelector") == PodsOnNodeSelector("gpu-1"));
}

TEST_CASE("drain: DaemonSet, mirror and finished pods stay, a budget's 429 is retried later") {
  Harness h;
  h.f.server->AddNode("gpu-1");
  h.f.server->AddNode("gpu-2");
  h.AddPod("ml", "web-1", "gpu-1", {{"labels", {{"app", "web"}}}});
  h.AddPod(
      "ml", "train-0", "gpu-1",
      {{"ownerReferences",
        {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "t"}, {"controller", true}}}}});
  h.AddPod("kube-system", "dcgm-exporter-x", "gpu-1",
           {{"ownerReferences",
             {{{"apiVersion", "apps/v1"},
               {"kind", "DaemonSet"},
               {"name", "d"},
               {"controller", true}}}}});
  h.AddPod("kube-system", "etcd-gpu-1", "gpu-1",
           {{"annotations", {{"kubernetes.io/config.mirror", "abc"}}}});
  h.AddPod("ml", "done-1", "gpu-1", json::object(), "Succeeded");
  h.AddPod("ml", "elsewhere", "gpu-2");
  h.f.server->SetDisruptionBudget("ml", "web-pdb", {{"app", "web"}}, 0);
  h.reasons["gpu-1"] = {"x.drain"};

  h.remediator->Tick();
  CHECK(h.Unschedulable("gpu-1"));  // cordoned first
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  CHECK(h.Evictions("ml", "train-0") == 1);
  CHECK_FALSE(h.f.server->GetPodJson("ml", "train-0"));
  CHECK(h.Evictions("ml", "web-1") == 1);  // 429
  CHECK(h.f.server->GetPodJson("ml", "web-1"));
  CHECK_FALSE(h.remediator->Drained("gpu-1"));

  // Within retry_interval (5 s): not asked again.
  h.f.clock.Advance(seconds(4));
  h.remediator->Tick();
  CHECK(h.Evictions("ml", "web-1") == 1);
  h.f.clock.Advance(seconds(2));
  h.remediator->Tick();
  CHECK(h.Evictions("ml", "web-1") == 2);  // refused again: now waits 10 s
  h.f.clock.Advance(seconds(6));
  h.remediator->Tick();
  CHECK(h.Evictions("ml", "web-1") == 2);

  // The budget allows one disruption (a replacement became ready elsewhere).
  h.f.server->SetDisruptionBudget("ml", "web-pdb", {{"app", "web"}}, 1);
  h.f.clock.Advance(seconds(5));
  h.remediator->Tick();
  CHECK(h.Evictions("ml", "web-1") == 3);
  CHECK_FALSE(h.f.server->GetPodJson("ml", "web-1"));
  h.remediator->Tick();
  CHECK(h.remediator->Drained("gpu-1"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "done");
  // Never asked to evict a DaemonSet, mirror, finished or other node's pod.
  CHECK(h.Evictions("kube-system", "dcgm-exporter-x") == 0);
  CHECK(h.Evictions("kube-system", "etcd-gpu-1") == 0);
  CHECK(h.Evictions("ml", "done-1") == 0);
  CHECK(h.Evictions("ml", "elsewhere") == 0);
  CHECK(h.f.server->GetPodJson("kube-system", "dcgm-exporter-x"));
  CHECK(h.f.metrics.CounterValue("faultline_tainter_evictions_total",
                                 {{"outcome", "blocked_by_budget"}}) == 2);
  // Every eviction body is a policy/v1 Eviction with the grace period set.
  for (const auto& r : h.f.server->Requests()) {
    if (!r.path.ends_with("/eviction")) continue;
    json body = json::parse(r.body);
    CHECK(body["apiVersion"] == "policy/v1");
    CHECK(body["kind"] == "Eviction");
    CHECK(body["deleteOptions"]["gracePeriodSeconds"] == 0);
  }

  // Lifted: uncordoned, the drain mark removed.
  h.reasons.clear();
  h.remediator->Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain").empty());
}

TEST_CASE("drain: at most max_concurrent nodes of the cluster drain at once") {
  Harness h;  // max_concurrent_drains 1
  for (const char* n : {"gpu-1", "gpu-2", "gpu-3"}) h.f.server->AddNode(n);
  // Another replica's drain holds the one slot (its mark is on gpu-3, a
  // node of that replica's partitions: this one leaves it alone).
  h.other_replica.insert("gpu-3");
  h.f.server->MutateNode(
      "gpu-3", [](json& n) { n["metadata"]["annotations"]["faultline.dev/drain"] = "running"; });
  h.AddPod("ml", "a", "gpu-1", {{"labels", {{"app", "a"}}}});
  h.AddPod("ml", "b", "gpu-2", {{"labels", {{"app", "b"}}}});
  h.f.server->SetDisruptionBudget("ml", "a", {{"app", "a"}}, 0);
  h.f.server->SetDisruptionBudget("ml", "b", {{"app", "b"}}, 0);
  h.reasons["gpu-1"] = {"x.drain"};
  h.reasons["gpu-2"] = {"x.drain"};
  h.remediator->Tick();
  CHECK(h.Unschedulable("gpu-1"));  // cordons do not wait
  CHECK(h.Unschedulable("gpu-2"));
  CHECK(h.Evictions("ml", "a") + h.Evictions("ml", "b") == 0);  // the slot is taken
  CHECK(h.f.metrics.CounterValue("faultline_tainter_drains_waiting_total") >= 1);

  // The other replica's drain ends: one slot, one drain. A waiting drain
  // re-reads the node list once per retry_interval (5 s), not every tick.
  h.f.server->MutateNode(
      "gpu-3", [](json& n) { n["metadata"]["annotations"]["faultline.dev/drain"] = "done"; });
  const int lists = h.f.server->CountRequests("GET", "/api/v1/nodes");
  h.remediator->Tick();
  CHECK(h.Evictions("ml", "a") + h.Evictions("ml", "b") == 0);
  CHECK(h.f.server->CountRequests("GET", "/api/v1/nodes") - lists <= 2);  // node GETs, no list
  h.f.clock.Advance(seconds(5));
  h.remediator->Tick();
  CHECK(h.remediator->active_drains() == 1);
  CHECK(h.Evictions("ml", "a") + h.Evictions("ml", "b") == 1);
  const std::string first = h.Evictions("ml", "a") == 1 ? "gpu-1" : "gpu-2";
  const std::string second = first == "gpu-1" ? "gpu-2" : "gpu-1";
  CHECK(h.Annotation(first, "faultline.dev/drain") == "running");
  CHECK(h.Annotation(second, "faultline.dev/drain").empty());

  // The first finishes; the second gets the slot.
  h.f.server->SetDisruptionBudget("ml", first == "gpu-1" ? "a" : "b",
                                  {{"app", first == "gpu-1" ? "a" : "b"}}, 1);
  h.f.clock.Advance(seconds(6));
  h.remediator->Tick();  // evicted
  h.remediator->Tick();  // done, and the second starts
  CHECK(h.remediator->Drained(first));
  CHECK(h.Annotation(second, "faultline.dev/drain") == "running");
  CHECK(h.remediator->active_drains() == 1);
}

TEST_CASE("drain: a drain whose reason goes away gives its slot back, the cordon stays") {
  Harness h;
  h.f.server->AddNode("gpu-1");
  h.AddPod("ml", "a", "gpu-1", {{"labels", {{"app", "a"}}}});
  h.f.server->SetDisruptionBudget("ml", "a", {{"app", "a"}}, 0);
  h.reasons["gpu-1"] = {"x.drain", "x.cordon"};
  h.remediator->Tick();
  REQUIRE(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  h.reasons["gpu-1"] = {"x.cordon"};  // the drain rule's reason expired
  h.remediator->Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain").empty());
  CHECK(h.remediator->active_drains() == 0);
  CHECK(h.Unschedulable("gpu-1"));
  CHECK(h.f.server->GetPodJson("ml", "a"));
}

// Issue 28, item 7: on a cluster without a kubelet an evicted pod stays
// Terminating forever, and with max_concurrent 1 the drain that waited for
// it held the cluster's one slot forever: the other faulted nodes stayed
// cordoned with their drains waiting, and only a counter said so.
TEST_CASE("drain: past its deadline a drain is reported as needing a person and frees its slot") {
  RemediationOptions o = Harness::Defaults();  // max_concurrent_drains 1
  o.drain_deadline = std::chrono::minutes(10);
  Harness h(o);
  std::vector<std::string> told;  // what the tainter heard (its condition says it)
  h.remediator->OnNeedsPerson(
      [&](const std::string& node, const std::string& why) { told.push_back(node + ": " + why); });
  h.f.server->AddNode("gpu-1");
  h.f.server->AddNode("gpu-2");
  // gpu-1's pod is leaving and never goes (no kubelet confirms its end).
  h.AddPod("ml", "stuck", "gpu-1", {{"deletionTimestamp", "2026-11-24T00:00:00Z"}});
  h.AddPod("ml", "b", "gpu-2");
  h.reasons["gpu-1"] = {"x.drain"};
  h.reasons["gpu-2"] = {"x.drain"};
  h.remediator->Tick();
  REQUIRE(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  CHECK(h.Evictions("ml", "b") == 0);  // gpu-2 waits for the slot

  h.f.clock.Advance(std::chrono::minutes(9));
  h.remediator->Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  CHECK(h.Evictions("ml", "b") == 0);
  CHECK(told.empty());

  // Past the deadline: gpu-1 needs a person, and its slot goes to gpu-2.
  h.f.clock.Advance(std::chrono::minutes(2));
  h.remediator->Tick();
  h.remediator->Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "timed-out");
  CHECK(h.Unschedulable("gpu-1"));  // still cordoned: a person decides
  CHECK(h.f.metrics.CounterValue("faultline_tainter_drains_total", {{"state", "timed_out"}}) == 1);
  REQUIRE(told.size() == 1);
  CHECK(told[0].starts_with("gpu-1: "));
  CHECK(told[0].find("ml/stuck") != std::string::npos);
  bool event = false;
  for (const json& e : h.f.server->Events()) {
    if (e["reason"] == "FaultlineDrainTimedOut" && e["involvedObject"]["name"] == "gpu-1") {
      event = true;
      CHECK(e["type"] == "Warning");
      CHECK(e["message"].get<std::string>().find("ml/stuck") != std::string::npos);
    }
  }
  CHECK(event);
  CHECK(h.Evictions("ml", "b") == 1);
  CHECK(h.Annotation("gpu-2", "faultline.dev/drain") != "");
  // It is not started again while the fault holds: the slot stays free.
  h.f.clock.Advance(std::chrono::minutes(20));
  h.remediator->Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "timed-out");
  CHECK(told.size() == 1);
  // The fault is lifted: uncordoned and the mark removed, as for any drain.
  h.reasons.erase("gpu-1");
  h.remediator->Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain").empty());
}

TEST_CASE("drain: a restarted tainter keeps the deadline from the drain's start on the node") {
  RemediationOptions o = Harness::Defaults();
  o.drain_deadline = std::chrono::minutes(10);
  Harness h(o);
  h.f.server->AddNode("gpu-1");
  h.AddPod("ml", "stuck", "gpu-1", {{"deletionTimestamp", "2026-11-24T00:00:00Z"}});
  h.reasons["gpu-1"] = {"x.drain"};
  h.remediator->Tick();
  REQUIRE(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain-started") == FormatRfc3339(h.f.clock.Now()));
  h.f.clock.Advance(std::chrono::minutes(9));
  // A new process 9 minutes into the drain: it reads the start from the
  // node, so the drain is given up at minute 10, not 10 minutes from now.
  Remediator restarted(o, h.View(), *h.evictions, h.f.Api(), h.f.Api(), h.f.metrics, h.f.clock);
  restarted.Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "running");
  h.f.clock.Advance(std::chrono::minutes(2));
  restarted.Tick();
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain") == "timed-out");
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain-started").empty());
  // Lifted: every mark goes.
  h.reasons.erase("gpu-1");
  restarted.Tick();
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK(h.Annotation("gpu-1", "faultline.dev/drain").empty());
}

TEST_CASE("remediation: --dry-run reads but never cordons or evicts") {
  RemediationOptions o = Harness::Defaults();
  o.dry_run = true;
  Harness h(o);
  h.f.server->AddNode("gpu-1");
  h.AddPod("ml", "a", "gpu-1");
  h.reasons["gpu-1"] = {"x.drain"};
  h.remediator->Tick();
  h.remediator->Tick();
  CHECK(h.f.server->CountRequests("PATCH") == 0);
  CHECK(h.f.server->CountRequests("POST") == 0);  // no eviction, no Event
  CHECK_FALSE(h.Unschedulable("gpu-1"));
  CHECK(h.f.server->GetPodJson("ml", "a"));
}

}  // namespace
}  // namespace faultline
