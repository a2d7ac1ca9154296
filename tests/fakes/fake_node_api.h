// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tainter/kube/node_api.h"

namespace faultline {

// An in-memory cluster of Nodes, their conditions, Events and Pods that
// behaves like the API server as NodeApi, EventApi and PodApi see it (it has
// no watch and no valve record: a test that needs those uses the API double,
// tests/support/fake_api_server.h, or passes none to the applier):
//  - every write bumps metadata.resourceVersion (a decimal counter shared by
//    all nodes, as etcd's revision is);
//  - UpdateNode is idempotent: a change already in effect succeeds without a
//    write (the resourceVersion stays), taints are identified by key+effect,
//    and taints/annotations the change does not name are left alone;
//  - an unknown node is kNotFound;
//  - PatchNodeConditions merges by type, as the status subresource's
//    strategic merge does (not counted in writes(): that is node writes);
//  - ListNodes understands the label selector forms faultline uses:
//    "k=v", "k==v", "k!=v", "k", "!k", joined by commas;
//  - the next calls can be told to fail (FailNext), per operation or for any.
//
// Tests reach in with Node()/MutateNode() to see or change state, e.g. to add
// a foreign taint "concurrently". Thread-safe (one mutex), so a test may
// inspect it while a tainter runs on another thread.
class FakeNodeApi final : public NodeApi, public EventApi, public PodApi {
 public:
  enum class Op { kAny, kGet, kList, kUpdate, kEvent, kListPods, kConditions };

  // Adds or replaces a node; an empty resource_version gets a fresh one.
  void AddNode(NodeInfo node) {
    std::lock_guard lock(mu_);
    if (node.resource_version.empty()) node.resource_version = NextVersionLocked();
    if (node.uid.empty()) node.uid = "uid-" + node.name;
    std::string name = node.name;
    nodes_[name] = std::move(node);
  }
  void AddNode(const std::string& name, std::map<std::string, std::string> labels = {}) {
    NodeInfo node;
    node.name = name;
    node.labels = std::move(labels);
    AddNode(std::move(node));
  }
  void RemoveNode(const std::string& name) {
    std::lock_guard lock(mu_);
    nodes_.erase(name);
  }

  // A copy of the node as stored; nullopt if absent.
  std::optional<NodeInfo> Node(const std::string& name) const {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return std::nullopt;
    return it->second;
  }
  // Changes a node as another controller would (bumps resourceVersion).
  void MutateNode(const std::string& name, const std::function<void(NodeInfo&)>& mutate) {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return;
    mutate(it->second);
    it->second.resource_version = NextVersionLocked();
  }

  // True if `name` carries a taint with this key (any effect if empty).
  bool HasTaint(const std::string& name, std::string_view key, std::string_view effect = "") const {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return false;
    return std::any_of(it->second.taints.begin(), it->second.taints.end(), [&](const NodeTaint& t) {
      return t.key == key && (effect.empty() || t.effect == effect);
    });
  }

  // The next calls of `op` (or of any operation) return these errors, in
  // order, before behaving normally again.
  void FailNext(Status error, Op op = Op::kAny) {
    std::lock_guard lock(mu_);
    failures_.push_back({op, std::move(error)});
  }

  std::vector<NodeEvent> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<NodeEvent> EventsFor(const std::string& node) const {
    std::lock_guard lock(mu_);
    std::vector<NodeEvent> out;
    for (const NodeEvent& e : events_) {
      if (e.node == node) out.push_back(e);
    }
    return out;
  }
  // Calls per operation (failed ones included) and writes that changed a node.
  int calls(Op op = Op::kAny) const {
    std::lock_guard lock(mu_);
    if (op == Op::kAny) return calls_total_;
    auto it = calls_.find(op);
    return it == calls_.end() ? 0 : it->second;
  }
  int writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  Result<NodeInfo> GetNode(std::string_view name) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kGet));
    auto it = nodes_.find(std::string(name));
    if (it == nodes_.end()) return NotFoundError("nodes \"" + std::string(name) + "\" not found");
    return it->second;
  }

  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kList));
    std::vector<NodeInfo> out;
    for (const auto& [name, node] : nodes_) {
      Result<bool> m = Matches(label_selector, node.labels);
      if (!m) return m.error();
      if (*m) out.push_back(node);
    }
    return out;
  }

  Status UpdateNode(std::string_view name, const NodeChange& change) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kUpdate));
    auto it = nodes_.find(std::string(name));
    if (it == nodes_.end()) return NotFoundError("nodes \"" + std::string(name) + "\" not found");
    NodeInfo& node = it->second;
    if (!change.expected_resource_version.empty() &&
        change.expected_resource_version != node.resource_version) {
      return AbortedError("node " + std::string(name) + " changed since it was read");
    }
    bool changed = false;
    if (change.remove_taint) {
      const auto before = node.taints.size();
      std::erase_if(node.taints,
                    [&](const NodeTaint& t) { return t.SameAs(*change.remove_taint); });
      changed |= node.taints.size() != before;
    }
    if (change.add_taint) {
      const bool present =
          std::any_of(node.taints.begin(), node.taints.end(),
                      [&](const NodeTaint& t) { return t.SameAs(*change.add_taint); });
      if (!present) {
        node.taints.push_back(*change.add_taint);
        changed = true;
      }
    }
    auto apply = [&](std::map<std::string, std::string>& have,
                     const std::map<std::string, std::optional<std::string>>& wanted) {
      for (const auto& [key, value] : wanted) {
        auto a = have.find(key);
        if (!value) {
          if (a != have.end()) {
            have.erase(a);
            changed = true;
          }
        } else if (a == have.end() || a->second != *value) {
          have[key] = *value;
          changed = true;
        }
      }
    };
    apply(node.annotations, change.annotations);
    apply(node.labels, change.labels);
    if (changed) {
      node.resource_version = NextVersionLocked();
      ++writes_;
    }
    return OkStatus();
  }

  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kConditions));
    auto it = nodes_.find(std::string(name));
    if (it == nodes_.end()) return NotFoundError("nodes \"" + std::string(name) + "\" not found");
    for (const NodeCondition& c : conditions) {
      auto have = std::find_if(it->second.conditions.begin(), it->second.conditions.end(),
                               [&](const NodeCondition& h) { return h.type == c.type; });
      if (have == it->second.conditions.end()) {
        it->second.conditions.push_back(c);
      } else {
        *have = c;
      }
    }
    it->second.resource_version = NextVersionLocked();
    return OkStatus();
  }

  Status CreateEvent(const NodeEvent& event) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kEvent));
    events_.push_back(event);
    return OkStatus();
  }

  // Pods, for the pod Events (tainter/kube/node_pods.h). Field selectors:
  // "spec.nodeName=X" and "status.phase!=Y" terms (`phases` holds each
  // pod's phase), the others are ignored.
  void AddPod(PodInfo pod, std::string phase = "Running") {
    std::lock_guard lock(mu_);
    pods_.push_back({std::move(pod), std::move(phase)});
  }
  Result<PodListing> ListPodsAt(std::string_view field_selector) override {
    std::lock_guard lock(mu_);
    FL_RETURN_IF_ERROR(BeginLocked(Op::kListPods));
    PodListing out;
    for (const auto& [pod, phase] : pods_) {
      bool ok = true;
      std::size_t pos = 0;
      while (ok && pos < field_selector.size()) {
        std::size_t comma = field_selector.find(',', pos);
        if (comma == std::string_view::npos) comma = field_selector.size();
        const std::string_view term = field_selector.substr(pos, comma - pos);
        pos = comma + 1;
        constexpr std::string_view kNode = "spec.nodeName=";
        constexpr std::string_view kNotPhase = "status.phase!=";
        if (term.substr(0, kNode.size()) == kNode) {
          ok = pod.node_name == term.substr(kNode.size());
        } else if (term.substr(0, kNotPhase.size()) == kNotPhase) {
          ok = phase != term.substr(kNotPhase.size());
        }
      }
      if (ok) out.pods.push_back(pod);
    }
    return out;
  }

  // The fake does not watch (the informers are tested against the API double).
  Status WatchPods(std::string_view /*field_selector*/, std::string_view /*resource_version*/,
                   std::chrono::seconds /*timeout*/,
                   const std::function<bool(const PodWatchEvent&)>& /*on_event*/,
                   const std::atomic<bool>* /*stop*/) override {
    return InternalError("FakeNodeApi does not watch pods (a bug in the test)");
  }

  // Label selector matching, exposed so tests can check the selector itself.
  static Result<bool> Matches(std::string_view selector,
                              const std::map<std::string, std::string>& labels) {
    std::size_t pos = 0;
    while (pos <= selector.size()) {
      std::size_t comma = selector.find(',', pos);
      if (comma == std::string_view::npos) comma = selector.size();
      std::string term(Trim(selector.substr(pos, comma - pos)));
      pos = comma + 1;
      if (term.empty()) {
        if (comma == selector.size()) break;
        continue;
      }
      bool ok = false;
      if (auto ne = term.find("!="); ne != std::string::npos) {
        auto it = labels.find(std::string(Trim(term.substr(0, ne))));
        ok = it == labels.end() || it->second != Trim(term.substr(ne + 2));
      } else if (auto eq = term.find('='); eq != std::string::npos) {
        std::size_t vstart = eq + 1;
        if (vstart < term.size() && term[vstart] == '=') ++vstart;
        auto it = labels.find(std::string(Trim(term.substr(0, eq))));
        ok = it != labels.end() && it->second == Trim(term.substr(vstart));
      } else if (term[0] == '!') {
        ok = labels.count(std::string(Trim(term.substr(1)))) == 0;
      } else if (term.find_first_of(" ()") != std::string::npos) {
        return InvalidArgumentError("unsupported label selector term '" + term + "'");
      } else {
        ok = labels.count(term) != 0;
      }
      if (!ok) return false;
      if (comma == selector.size()) break;
    }
    return true;
  }

 private:
  static std::string_view Trim(std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  }

  std::string NextVersionLocked() { return std::to_string(++version_); }

  Status BeginLocked(Op op) {
    ++calls_total_;
    ++calls_[op];
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      if (it->first == Op::kAny || it->first == op) {
        Status s = std::move(it->second);
        failures_.erase(it);
        return s;
      }
    }
    return OkStatus();
  }

  mutable std::mutex mu_;
  std::map<std::string, NodeInfo> nodes_;
  std::vector<NodeEvent> events_;
  std::vector<std::pair<PodInfo, std::string>> pods_;  // with its phase
  std::deque<std::pair<Op, Status>> failures_;
  std::map<Op, int> calls_;
  int calls_total_ = 0;
  int writes_ = 0;
  long long version_ = 1000;
};

}  // namespace faultline
