// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/dry_run_node_api.h"

#include <algorithm>

#include "base/log.h"
#include "tainter/core/reasons.h"

namespace faultline {
namespace {

// What a node change means, in words, above the patch that says it exactly.
void DescribeChange(std::ostream& out, const NodeChange& change) {
  if (change.add_taint) out << "  + taint      " << TaintText(*change.add_taint) << '\n';
  if (change.remove_taint) out << "  - taint      " << TaintText(*change.remove_taint) << '\n';
  for (const auto& [key, value] : change.annotations) {
    if (!value) {
      out << "  - annotation " << key << '\n';
      continue;
    }
    out << "  ~ annotation " << key;
    if (Result<std::vector<Reason>> reasons = DecodeReasons(*value); reasons) {
      out << " (" << reasons->size() << (reasons->size() == 1 ? " reason:" : " reasons:");
      for (const Reason& r : *reasons) out << ' ' << r.rule;
      out << ')';
    }
    out << '\n';
  }
  for (const auto& [key, value] : change.labels) {
    out << (value ? "  ~ label      " : "  - label      ") << key << (value ? "=" + *value : "")
        << '\n';
  }
}

// `text` (a JSON document dumped with indent 2), each line indented by 4.
void PrintIndented(std::ostream& out, const std::string& text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out << "    " << std::string_view(text).substr(pos, end - pos) << '\n';
    pos = end + 1;
  }
}

}  // namespace

nlohmann::json NodeInfoToJson(const NodeInfo& node) {
  nlohmann::json metadata = {{"name", node.name}, {"resourceVersion", node.resource_version}};
  if (!node.uid.empty()) metadata["uid"] = node.uid;
  if (!node.labels.empty()) metadata["labels"] = node.labels;
  if (!node.annotations.empty()) metadata["annotations"] = node.annotations;
  nlohmann::json json = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", metadata}};
  json["spec"] = nlohmann::json::object();
  if (!node.taints.empty()) {
    nlohmann::json taints = nlohmann::json::array();
    for (const NodeTaint& t : node.taints) taints.push_back(TaintToJson(t));
    json["spec"]["taints"] = std::move(taints);
  }
  return json;
}

DryRunNodeApi::DryRunNodeApi(Options options, const Clock& clock, NodeApi* reader, PodApi* pods)
    : options_(std::move(options)), clock_(clock), reader_(reader), pods_(pods) {}

DryRunNodeApi::DryRunNodeApi(std::string node, std::ostream& out, const Clock& clock,
                             NodeApi* reader, EventOptions events)
    : DryRunNodeApi(Options{.out = &out,
                            .metrics = nullptr,
                            .only_node = std::move(node),
                            .events = std::move(events)},
                    clock, reader) {}

Result<NodeInfo*> DryRunNodeApi::Load(std::string_view name) {
  const bool only = !options_.only_node.empty();
  if (only && name != options_.only_node) {
    return NotFoundError("nodes \"" + std::string(name) + "\" not found (dry run knows only " +
                         options_.only_node + ")");
  }
  if (auto it = nodes_.find(name); it != nodes_.end()) return &it->second;
  NodeInfo node;
  node.name = std::string(name);
  // assign(1, '0'), not = "0": GCC 12 -O2 reports a false -Wrestrict on the
  // literal assignment here.
  node.resource_version.assign(1, '0');
  if (reader_ != nullptr) {
    // Start from the real node, so the reported patches are the ones the
    // server would get. Reading is allowed in a dry run; writing is not.
    Result<NodeInfo> real = reader_->GetNode(name);
    if (real) {
      node = std::move(*real);
    } else if (!only) {
      return real.error();  // the tainter retries or forgets the node, as it would for real
    } else {
      // The standalone agent's dry run is for looking: when its node cannot
      // be read (not in that cluster, API unreachable), show the patches
      // against a new node rather than show nothing.
      LogWarning("standalone",
                 "dry run: cannot read the node; patches assume a node without taints",
                 {{"node", node.name}, {"error", real.error().ToString()}});
      if (options_.out != nullptr) {
        *options_.out << "(dry run: cannot read node " << node.name << " from the API server ("
                      << real.error().message() << "); patches assume a node without taints)\n";
      }
    }
  }
  auto [it, inserted] = nodes_.emplace(std::string(name), std::move(node));
  return &it->second;
}

Result<NodeInfo> DryRunNodeApi::GetNode(std::string_view name) {
  Result<NodeInfo*> node = Load(name);
  if (!node) return node.error();
  return **node;
}

Result<std::vector<NodeInfo>> DryRunNodeApi::ListNodes(std::string_view label_selector) {
  if (!options_.only_node.empty()) {
    Result<NodeInfo*> node = Load(options_.only_node);
    if (!node) return node.error();
    return std::vector<NodeInfo>{**node};
  }
  if (reader_ == nullptr) {
    std::vector<NodeInfo> out;
    for (const auto& [name, node] : nodes_) out.push_back(node);
    return out;
  }
  Result<std::vector<NodeInfo>> listed = reader_->ListNodes(label_selector);
  if (!listed) return listed.error();
  for (NodeInfo& n : *listed) {
    if (auto it = nodes_.find(n.name); it != nodes_.end()) n = it->second;
  }
  return listed;
}

Status DryRunNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  Result<NodeInfo*> loaded = Load(name);
  if (!loaded) return loaded.error();
  NodeInfo& node = **loaded;
  if (!change.expected_resource_version.empty() &&
      change.expected_resource_version != node.resource_version) {
    return AbortedError("node " + node.name + " changed since it was read");
  }
  const nlohmann::json patch = BuildNodePatch(NodeInfoToJson(node), change);
  if (patch.empty()) return OkStatus();  // already in effect: the client sends nothing

  if (options_.out != nullptr) {
    std::ostream& out = *options_.out;
    out << "  would send: PATCH /api/v1/nodes/" << node.name
        << "  (Content-Type: application/json-patch+json)\n";
    DescribeChange(out, change);
    PrintIndented(out, patch.dump(2));
    out.flush();
  }
  if (options_.metrics != nullptr) {
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : change.annotations) annotations[k] = v ? nlohmann::json(*v) : nullptr;
    nlohmann::json fields = {{"node", node.name}, {"annotations", annotations}};
    if (change.add_taint) fields["add_taint"] = TaintText(*change.add_taint);
    if (change.remove_taint) fields["remove_taint"] = TaintText(*change.remove_taint);
    LogInfo("tainter", "dry-run: would update node", fields);
    options_.metrics->DryRunWrites("update").Inc();
  }

  // Apply it to the copy as the server would, so the next patch builds on it.
  if (change.remove_taint) {
    std::erase_if(node.taints, [&](const NodeTaint& t) { return t.SameAs(*change.remove_taint); });
  }
  if (change.add_taint &&
      std::none_of(node.taints.begin(), node.taints.end(),
                   [&](const NodeTaint& t) { return t.SameAs(*change.add_taint); })) {
    node.taints.push_back(*change.add_taint);
  }
  for (const auto& [key, value] : change.annotations) {
    if (value) {
      node.annotations[key] = *value;
    } else {
      node.annotations.erase(key);
    }
  }
  char* end = nullptr;
  const long long version = std::strtoll(node.resource_version.c_str(), &end, 10);
  node.resource_version = std::to_string(*end == '\0' ? version + 1 : 1);
  ++patches_;
  return OkStatus();
}

Status DryRunNodeApi::PatchNodeConditions(std::string_view name,
                                          const std::vector<NodeCondition>& conditions) {
  Result<NodeInfo*> loaded = Load(name);
  if (!loaded) return loaded.error();
  NodeInfo& node = **loaded;
  const nlohmann::json patch = BuildConditionsPatch(conditions);
  if (options_.out != nullptr) {
    std::ostream& out = *options_.out;
    out << "  would send: PATCH /api/v1/nodes/" << node.name
        << "/status  (Content-Type: application/strategic-merge-patch+json)\n";
    for (const NodeCondition& c : conditions) {
      out << "  ~ condition  " << c.type << '=' << c.status << " (" << c.reason << ")\n";
    }
    PrintIndented(out, patch.dump(2));
    out.flush();
  }
  if (options_.metrics != nullptr) {
    nlohmann::json set = nlohmann::json::object();
    for (const NodeCondition& c : conditions) set[c.type] = c.status;
    LogInfo("tainter", "dry-run: would patch node conditions",
            {{"node", node.name}, {"conditions", set}, {"patch", patch}});
    options_.metrics->DryRunWrites("conditions").Inc();
  }
  // Merged by type into the copy, as the API server's strategic merge does.
  for (const NodeCondition& c : conditions) {
    auto it = std::find_if(node.conditions.begin(), node.conditions.end(),
                           [&](const NodeCondition& have) { return have.type == c.type; });
    if (it == node.conditions.end()) {
      node.conditions.push_back(c);
    } else {
      *it = c;
    }
  }
  ++condition_patches_;
  return OkStatus();
}

Status DryRunNodeApi::CreateEvent(const NodeEvent& event) {
  Result<NodeInfo*> loaded = Load(event.node);
  if (!loaded) return loaded.error();
  if (options_.out != nullptr) {
    const nlohmann::json json = BuildEventJson(event, clock_.Now(), options_.events);
    *options_.out << "  would send: POST /api/v1/namespaces/"
                  << EventNamespace(event, options_.events) << "/events\n"
                  << "  Event " << event.type << ' ' << event.reason << " on "
                  << (event.subject ? event.subject->kind + ' ' + event.subject->namespace_name +
                                          '/' + event.subject->name
                                    : "node " + event.node)
                  << ": " << json.value("message", event.message) << '\n'
                  << "    " << json.dump() << '\n';
    options_.out->flush();
  }
  if (options_.metrics != nullptr) {
    LogInfo("tainter", "dry-run: would record event",
            {{"node", event.node},
             {"type", event.type},
             {"reason", event.reason},
             {"message", event.message}});
    options_.metrics->DryRunWrites("event").Inc();
  }
  ++events_;
  return OkStatus();
}

}  // namespace faultline
