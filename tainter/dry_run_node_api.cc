// SPDX-License-Identifier: Apache-2.0
#include "tainter/dry_run_node_api.h"

#include <algorithm>

#include "base/log.h"
#include "tainter/reasons.h"

namespace faultline {
namespace {

std::string TaintText(const NodeTaint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

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

DryRunNodeApi::DryRunNodeApi(std::string node, std::ostream& out, const Clock& clock,
                             NodeApi* reader, EventOptions events)
    : out_(out), clock_(clock), reader_(reader), event_options_(std::move(events)) {
  node_.name = std::move(node);
  // assign(1, '0'), not = "0": GCC 12 -O2 reports a false -Wrestrict on the
  // literal assignment here.
  node_.resource_version.assign(1, '0');
}

Status DryRunNodeApi::Load(std::string_view name) {
  if (name != node_.name) {
    return NotFoundError("nodes \"" + std::string(name) + "\" not found (dry run knows only " +
                         node_.name + ")");
  }
  if (loaded_) return OkStatus();
  if (reader_ != nullptr) {
    // Start from the real node, so the printed patches are the ones the
    // server would get. Reading is allowed in a dry run; writing is not.
    // A dry run is for looking: when the real node cannot be read (not in
    // that cluster, API unreachable), show the patches against a new node
    // rather than show nothing.
    Result<NodeInfo> real = reader_->GetNode(name);
    if (real) {
      node_ = std::move(*real);
    } else {
      LogWarning("standalone",
                 "dry run: cannot read the node; patches assume a node without taints",
                 {{"node", node_.name}, {"error", real.error().ToString()}});
      out_ << "(dry run: cannot read node " << node_.name << " from the API server ("
           << real.error().message() << "); patches assume a node without taints)\n";
    }
  }
  loaded_ = true;
  return OkStatus();
}

Result<NodeInfo> DryRunNodeApi::GetNode(std::string_view name) {
  FL_RETURN_IF_ERROR(Load(name));
  return node_;
}

Result<std::vector<NodeInfo>> DryRunNodeApi::ListNodes(std::string_view /*label_selector*/) {
  FL_RETURN_IF_ERROR(Load(node_.name));
  return std::vector<NodeInfo>{node_};
}

Status DryRunNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  FL_RETURN_IF_ERROR(Load(name));
  const nlohmann::json patch = BuildNodePatch(NodeInfoToJson(node_), change);
  if (patch.empty()) return OkStatus();  // already in effect: the client sends nothing

  out_ << "  would send: PATCH /api/v1/nodes/" << node_.name
       << "  (Content-Type: application/json-patch+json)\n";
  DescribeChange(out_, change);
  std::string text = patch.dump(2);
  for (std::size_t pos = 0; pos < text.size();) {  // indent every line
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out_ << "    " << std::string_view(text).substr(pos, end - pos) << '\n';
    pos = end + 1;
  }
  out_.flush();

  // Apply it to the copy as the server would, so the next patch builds on it.
  if (change.remove_taint) {
    std::erase_if(node_.taints, [&](const NodeTaint& t) { return t.SameAs(*change.remove_taint); });
  }
  if (change.add_taint &&
      std::none_of(node_.taints.begin(), node_.taints.end(),
                   [&](const NodeTaint& t) { return t.SameAs(*change.add_taint); })) {
    node_.taints.push_back(*change.add_taint);
  }
  for (const auto& [key, value] : change.annotations) {
    if (value) {
      node_.annotations[key] = *value;
    } else {
      node_.annotations.erase(key);
    }
  }
  char* end = nullptr;
  const long long version = std::strtoll(node_.resource_version.c_str(), &end, 10);
  node_.resource_version = std::to_string(*end == '\0' ? version + 1 : 1);
  ++patches_;
  return OkStatus();
}

Status DryRunNodeApi::CreateEvent(const NodeEvent& event) {
  FL_RETURN_IF_ERROR(Load(event.node));
  const nlohmann::json json = BuildEventJson(event, clock_.Now(), event_options_);
  out_ << "  would send: POST /api/v1/namespaces/" << event_options_.namespace_name << "/events\n"
       << "  Event " << event.type << ' ' << event.reason << " on node " << event.node << ": "
       << json.value("message", event.message) << '\n'
       << "    " << json.dump() << '\n';
  out_.flush();
  ++events_;
  return OkStatus();
}

}  // namespace faultline
