// SPDX-License-Identifier: Apache-2.0
// The pod index of fleet correlation (tainter/correlation/pod_index.h): pod
// IP -> node, namespace/pod -> controller, a hard bound; and what the
// correlator does with it (a peer named by a pod IP, an incident's owner).
#include "tainter/correlation/pod_index.h"

#include <doctest/doctest.h>

#include "tainter/correlation/correlator.h"

namespace faultline {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::system_clock::time_point;

const TimePoint kT0 = std::chrono::system_clock::from_time_t(1'800'000'000);

PodInfo Pod(const std::string& name, const std::string& node, const std::string& ip,
            const std::string& owner_kind = "PyTorchJob", const std::string& owner = "train-a") {
  PodInfo p;
  p.namespace_name = "ml";
  p.name = name;
  p.node_name = node;
  if (!ip.empty()) p.ips = {ip};
  if (!owner.empty()) {
    p.owner_api_version = "kubeflow.org/v1";
    p.owner_kind = owner_kind;
    p.owner_name = owner;
  }
  return p;
}

TEST_CASE("a pod IP resolves to the pod's node in any spelling, until the pod is gone") {
  PodIndex index;
  index.Upsert(Pod("train-a-worker-17", "gpu-17", "10.1.17.5"));
  CHECK(index.NodeOf("10.1.17.5") == "gpu-17");
  CHECK(index.NodeOf("::ffff:10.1.17.5") == "gpu-17");
  CHECK(index.NodeOf("10.1.17.5<33941>") == "gpu-17");
  CHECK_FALSE(index.NodeOf("10.1.17.6"));
  index.Remove("ml", "train-a-worker-17");
  CHECK_FALSE(index.NodeOf("10.1.17.5"));
  CHECK(index.size() == 0);
  CHECK(index.addresses() == 0);
}

TEST_CASE("a re-used pod IP belongs to its newest holder: the old pod's deletion keeps it") {
  PodIndex index;
  index.Upsert(Pod("old", "gpu-1", "10.1.0.9"));
  index.Upsert(Pod("new", "gpu-2", "10.1.0.9"));
  CHECK(index.NodeOf("10.1.0.9") == "gpu-2");
  index.Remove("ml", "old");
  CHECK(index.NodeOf("10.1.0.9") == "gpu-2");
}

TEST_CASE("host-network pods keep their owner but index no IP (it is the node's)") {
  PodIndex index;
  PodInfo p = Pod("agent-x7k2p", "gpu-3", "10.0.0.3", "DaemonSet", "faultline-agent");
  p.host_network = true;
  index.Upsert(p);
  CHECK_FALSE(index.NodeOf("10.0.0.3"));
  CHECK(index.OwnerOf("ml", "agent-x7k2p")->kind == "DaemonSet");
}

TEST_CASE("the owner is the controller: a pod without one has none") {
  PodIndex index;
  index.Upsert(Pod("train-a-worker-0", "gpu-0", "10.1.0.5"));
  index.Upsert(Pod("debug", "gpu-0", "10.1.0.6", "", ""));
  auto owner = index.OwnerOf("ml", "train-a-worker-0");
  REQUIRE(owner);
  CHECK(owner->api_version == "kubeflow.org/v1");
  CHECK(owner->kind == "PyTorchJob");
  CHECK(owner->name == "train-a");
  CHECK_FALSE(index.OwnerOf("ml", "debug"));
  CHECK_FALSE(index.OwnerOf("other", "train-a-worker-0"));
}

TEST_CASE("the index holds at most max_pods: the rest are counted, a re-list starts over") {
  PodIndex index({.max_pods = 3});
  for (int i = 0; i < 5; ++i) {
    index.Upsert(
        Pod("p-" + std::to_string(i), "gpu-" + std::to_string(i), "10.1.0." + std::to_string(i)));
  }
  CHECK(index.size() == 3);
  CHECK(index.dropped() == 2);
  CHECK(index.NodeOf("10.1.0.2") == "gpu-2");
  CHECK_FALSE(index.NodeOf("10.1.0.4"));
  // An update of an indexed pod is not a new entry: it still fits.
  index.Upsert(Pod("p-0", "gpu-9", "10.1.0.0"));
  CHECK(index.NodeOf("10.1.0.0") == "gpu-9");
  CHECK(index.size() == 3);
  index.Replace({Pod("q", "gpu-7", "10.1.7.7")});
  CHECK(index.size() == 1);
  CHECK_FALSE(index.NodeOf("10.1.0.0"));
  CHECK(index.NodeOf("10.1.7.7") == "gpu-7");
}

FaultEvent Completion(const std::string& reporter, const std::string& peer, TimePoint at) {
  FaultEvent e;
  e.id = reporter + "-" + peer;
  e.node = reporter;
  e.rule = "nccl.ib-completion-error";
  e.category = "network";
  e.severity = Severity::kError;
  e.action = Action::kTaint;
  e.origin = Origin::kPod;
  e.peer = peer;
  e.log_time = at;
  e.labels = {{"namespace", "ml"}, {"pod", "train-a-worker-" + reporter}};
  return e;
}

TEST_CASE("a peer named by a pod IP only the pod watch knows blames the pod's node") {
  Correlator c({});
  c.addresses().Set(AddressBook::Witness::kNodeStatus, "gpu-17", {"10.0.0.17"});
  // Without the pod, the address is nobody's: the line stays its reporter's.
  CHECK_FALSE(c.Accused(Completion("gpu-1", "10.1.17.5", kT0)));
  c.pods().Upsert(Pod("train-a-worker-17", "gpu-17", "10.1.17.5"));
  CHECK(c.Accused(Completion("gpu-1", "10.1.17.5", kT0)) == "gpu-17");
  // A pod naming its own node's pod IP blames nobody.
  CHECK_FALSE(c.Accused(Completion("gpu-17", "10.1.17.5", kT0)));
}

TEST_CASE("an incident's job is its pods' controller when known, else the name's guess") {
  Correlator c({});
  for (int i = 0; i < 4; ++i) {
    // Pods named unlike their job: only the owner groups them.
    c.pods().Upsert(Pod("rank" + std::to_string(i) + "-abc", "gpu-" + std::to_string(i),
                        "10.1.0." + std::to_string(i)));
  }
  for (int i = 0; i < 4; ++i) {
    FaultEvent e = Completion("gpu-" + std::to_string(i), "", kT0 + std::chrono::seconds(i));
    e.rule = "nccl.watchdog-timeout";
    e.category = "application";
    e.action = Action::kEvent;
    e.labels["pod"] = "rank" + std::to_string(i) + "-abc";
    c.Observe(e);
  }
  FaultEvent unknown = Completion("gpu-9", "", kT0);
  unknown.rule = "nccl.watchdog-timeout";
  unknown.category = "application";
  unknown.action = Action::kEvent;
  unknown.labels["pod"] = "train-llm-worker-9";
  c.Observe(unknown);
  unknown.node = "gpu-10";
  unknown.labels["pod"] = "train-llm-worker-10";
  c.Observe(unknown);
  std::vector<Incident> incidents = c.TakeIncidents(kT0 + 1h, true);
  REQUIRE(incidents.size() == 2);
  const Incident& a = incidents[0].job == "ml/train-a" ? incidents[0] : incidents[1];
  const Incident& b = incidents[0].job == "ml/train-a" ? incidents[1] : incidents[0];
  CHECK(a.job == "ml/train-a");
  CHECK(a.nodes.size() == 4);
  CHECK(a.owner.kind == "PyTorchJob");
  CHECK(FormatIncident(a).find("\n    owner: PyTorchJob/train-a") != std::string::npos);
  CHECK(b.job == "ml/train-llm");
  CHECK(b.owner.name.empty());
  CHECK(FormatIncident(b).find("owner:") == std::string::npos);
}

}  // namespace
}  // namespace faultline
