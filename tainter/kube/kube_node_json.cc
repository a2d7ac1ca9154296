// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_node_json.h"

#include <time.h>

#include <cstdio>

#include "base/fault_event.h"

namespace faultline {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

NodeTaint TaintFromJson(const json& t) {
  NodeTaint taint;
  taint.key = StringAt(t, "key");
  taint.value = StringAt(t, "value");
  taint.effect = StringAt(t, "effect");
  taint.time_added = StringAt(t, "timeAdded");
  return taint;
}

std::uint64_t Fnv1a(std::string_view data, std::uint64_t hash = 1469598103934665603ULL) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace

Result<PodInfo> PodInfoFromJson(const json& pod) {
  auto str = [](const json& o, const char* key) -> std::string {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>()
                                                                  : std::string();
  };
  auto flag = [](const json& o, const char* key) {
    return o.contains(key) && o[key].is_boolean() && o[key].get<bool>();
  };
  if (!pod.is_object() || !pod.contains("metadata") || !pod["metadata"].is_object()) {
    return InvalidArgumentError("not a Pod object: no metadata");
  }
  const json& meta = pod["metadata"];
  PodInfo info;
  info.name = str(meta, "name");
  if (info.name.empty()) return InvalidArgumentError("not a Pod object: no metadata.name");
  info.namespace_name = str(meta, "namespace");
  info.uid = str(meta, "uid");
  info.resource_version = str(meta, "resourceVersion");
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    info.mirror = meta["annotations"].contains("kubernetes.io/config.mirror");
  }
  info.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (meta.contains("ownerReferences") && meta["ownerReferences"].is_array()) {
    for (const json& ref : meta["ownerReferences"]) {
      if (!ref.is_object() || !flag(ref, "controller")) continue;
      info.owner_api_version = str(ref, "apiVersion");
      info.owner_kind = str(ref, "kind");
      info.owner_name = str(ref, "name");
      info.owner_uid = str(ref, "uid");
      break;
    }
  }
  if (pod.contains("spec") && pod["spec"].is_object()) {
    const json& spec = pod["spec"];
    info.node_name = str(spec, "nodeName");
    info.host_network = flag(spec, "hostNetwork");
  }
  if (pod.contains("status") && pod["status"].is_object()) {
    const json& status = pod["status"];
    info.phase = str(status, "phase");
    if (status.contains("podIPs") && status["podIPs"].is_array()) {
      for (const json& ip : status["podIPs"]) {
        if (std::string a = str(ip, "ip"); !a.empty()) info.ips.push_back(std::move(a));
      }
    }
    if (info.ips.empty()) {
      if (std::string a = str(status, "podIP"); !a.empty()) info.ips.push_back(std::move(a));
    }
  }
  return info;
}

Result<NodeInfo> NodeInfoFromJson(const json& node) {
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) {
    return InvalidArgumentError("not a Node object: no metadata");
  }
  const json& meta = node["metadata"];
  NodeInfo info;
  info.name = StringAt(meta, "name");
  if (info.name.empty()) return InvalidArgumentError("not a Node object: no metadata.name");
  info.uid = StringAt(meta, "uid");
  info.resource_version = StringAt(meta, "resourceVersion");
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.find(field);
    if (it == meta.end() || !it->is_object()) continue;
    auto& out = std::string_view(field) == "labels" ? info.labels : info.annotations;
    for (const auto& [key, value] : it->items()) {
      if (value.is_string()) out[key] = value.get<std::string>();
    }
  }
  if (auto spec = node.find("spec"); spec != node.end() && spec->is_object()) {
    if (auto taints = spec->find("taints"); taints != spec->end() && taints->is_array()) {
      for (const auto& t : *taints) info.taints.push_back(TaintFromJson(t));
    }
  }
  if (auto status = node.find("status"); status != node.end() && status->is_object()) {
    if (auto conds = status->find("conditions"); conds != status->end() && conds->is_array()) {
      for (const auto& c : *conds) {
        if (!c.is_object()) continue;
        info.conditions.push_back({StringAt(c, "type"), StringAt(c, "status"),
                                   StringAt(c, "reason"), StringAt(c, "message"),
                                   StringAt(c, "lastHeartbeatTime"),
                                   StringAt(c, "lastTransitionTime")});
      }
    }
    if (auto ni = status->find("nodeInfo"); ni != status->end() && ni->is_object()) {
      info.boot_id = StringAt(*ni, "bootID");
    }
    // status.addresses[].address (InternalIP, ExternalIP, Hostname): fleet
    // correlation resolves the addresses fault lines name to nodes.
    if (auto addrs = status->find("addresses"); addrs != status->end() && addrs->is_array()) {
      for (const auto& a : *addrs) {
        if (a.is_object() && a.contains("address") && a["address"].is_string()) {
          info.addresses.push_back(a["address"].get<std::string>());
        }
      }
    }
  }
  return info;
}

json BuildConditionsPatch(const std::vector<NodeCondition>& conditions) {
  json list = json::array();
  for (const NodeCondition& c : conditions) {
    json j = {{"type", c.type}, {"status", c.status}, {"reason", c.reason}, {"message", c.message}};
    if (!c.last_heartbeat_time.empty()) j["lastHeartbeatTime"] = c.last_heartbeat_time;
    if (!c.last_transition_time.empty()) j["lastTransitionTime"] = c.last_transition_time;
    list.push_back(std::move(j));
  }
  return {{"status", {{"conditions", std::move(list)}}}};
}

json TaintToJson(const NodeTaint& taint) {
  json t = {{"key", taint.key}, {"effect", taint.effect}};
  if (!taint.value.empty()) t["value"] = taint.value;
  if (!taint.time_added.empty()) t["timeAdded"] = taint.time_added;
  return t;
}

std::string EscapeJsonPointer(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

json BuildNodePatch(const json& node, const NodeChange& change) {
  json ops = json::array();
  const json empty_object = json::object();
  const json& meta =
      node.contains("metadata") && node["metadata"].is_object() ? node["metadata"] : empty_object;
  const json& spec =
      node.contains("spec") && node["spec"].is_object() ? node["spec"] : empty_object;
  const bool has_spec = node.contains("spec") && node["spec"].is_object();
  const bool has_taints = spec.contains("taints") && spec["taints"].is_array();
  const json taints = has_taints ? spec["taints"] : json::array();

  auto index_of = [&](const NodeTaint& wanted) -> int {
    for (std::size_t i = 0; i < taints.size(); ++i) {
      if (TaintFromJson(taints[i]).SameAs(wanted)) return static_cast<int>(i);
    }
    return -1;
  };

  // Removal first, so that a change that swaps our taint's effect still
  // addresses the index it read.
  bool removed = false;
  int removed_index = -1;
  if (change.remove_taint) {
    removed_index = index_of(*change.remove_taint);
    if (removed_index >= 0) {
      const std::string path = "/spec/taints/" + std::to_string(removed_index);
      ops.push_back({{"op", "test"}, {"path", path}, {"value", taints[removed_index]}});
      ops.push_back({{"op", "remove"}, {"path", path}});
      removed = true;
    }
  }
  if (change.add_taint) {
    const int existing = index_of(*change.add_taint);
    const bool present = existing >= 0 && !(removed && existing == removed_index);
    if (!present) {
      json taint = TaintToJson(*change.add_taint);
      if (!has_spec) {
        ops.push_back({{"op", "add"}, {"path", "/spec"}, {"value", {{"taints", {taint}}}}});
      } else if (!has_taints) {
        ops.push_back({{"op", "add"}, {"path", "/spec/taints"}, {"value", json::array({taint})}});
      } else {
        ops.push_back({{"op", "add"}, {"path", "/spec/taints/-"}, {"value", taint}});
      }
    }
  }

  // Annotations and labels: the same JSON patch ops under their own map.
  auto map_ops = [&](const char* field,
                     const std::map<std::string, std::optional<std::string>>& wanted) {
    const bool has_map = meta.contains(field) && meta[field].is_object();
    const json current = has_map ? meta[field] : json::object();
    json new_map = json::object();  // used when there is no such map yet
    for (const auto& [key, value] : wanted) {
      const auto it = current.find(key);
      const bool exists = it != current.end();
      const std::string path = "/metadata/" + std::string(field) + "/" + EscapeJsonPointer(key);
      if (!value) {
        if (exists) ops.push_back({{"op", "remove"}, {"path", path}});
        continue;
      }
      if (!has_map) {
        new_map[key] = *value;
      } else if (!exists) {
        ops.push_back({{"op", "add"}, {"path", path}, {"value", *value}});
      } else if (!it->is_string() || it->get<std::string>() != *value) {
        ops.push_back({{"op", "replace"}, {"path", path}, {"value", *value}});
      }
    }
    if (!new_map.empty()) {
      ops.push_back(
          {{"op", "add"}, {"path", "/metadata/" + std::string(field)}, {"value", new_map}});
    }
  };
  map_ops("annotations", change.annotations);
  map_ops("labels", change.labels);

  if (ops.empty()) return ops;
  json patch = json::array();
  patch.push_back({{"op", "test"},
                   {"path", "/metadata/resourceVersion"},
                   {"value", StringAt(meta, "resourceVersion")}});
  for (auto& op : ops) patch.push_back(std::move(op));
  return patch;
}

json NodeBaseToJson(const NodeBase& base) {
  const NodeInfo& node = base.node;
  json metadata = {{"name", node.name}, {"resourceVersion", node.resource_version}};
  if (!node.uid.empty()) metadata["uid"] = node.uid;
  if (base.has_labels || !node.labels.empty()) metadata["labels"] = node.labels;
  if (base.has_annotations || !node.annotations.empty()) {
    metadata["annotations"] = node.annotations;
  }
  json spec = json::object();
  if (!node.taints.empty()) {
    json taints = json::array();
    for (const NodeTaint& t : node.taints) taints.push_back(TaintToJson(t));
    spec["taints"] = std::move(taints);
  }
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", metadata}, {"spec", spec}};
}

std::string EventNamespace(const NodeEvent& event, const EventOptions& options) {
  return event.subject ? event.subject->namespace_name : options.namespace_name;
}

json BuildEventJson(const NodeEvent& event, std::chrono::system_clock::time_point now,
                    const EventOptions& options) {
  const std::string message = TruncateUtf8(event.message, options.max_message_bytes);
  std::uint64_t hash = Fnv1a(event.node);
  hash = Fnv1a(std::string_view("\0", 1), hash);
  if (event.subject) {  // one Event per subject: the same message on two pods is two Events
    for (const std::string* part :
         {&event.subject->kind, &event.subject->namespace_name, &event.subject->name}) {
      hash = Fnv1a(*part, hash);
      hash = Fnv1a(std::string_view("\0", 1), hash);
    }
  }
  hash = Fnv1a(event.type, hash);
  hash = Fnv1a(std::string_view("\0", 1), hash);
  hash = Fnv1a(event.reason, hash);
  hash = Fnv1a(std::string_view("\0", 1), hash);
  hash = Fnv1a(message, hash);
  char suffix[20];
  std::snprintf(suffix, sizeof(suffix), ".%016llx", static_cast<unsigned long long>(hash));
  // Names are DNS subdomains of at most 253 characters; named after the
  // subject, as kubectl and the kubelet name theirs (`<pod>.<hex>`).
  const std::string& stem = event.subject ? event.subject->name : event.node;
  const std::string name = stem.substr(0, 253 - 17) + suffix;
  const std::string time = KubeTime(now);
  json involved;
  if (event.subject) {
    const EventSubject& s = *event.subject;
    involved = {{"kind", s.kind},
                {"apiVersion", s.api_version},
                {"name", s.name},
                {"namespace", s.namespace_name}};
    if (!s.uid.empty()) involved["uid"] = s.uid;
  } else {
    involved = {{"kind", "Node"}, {"apiVersion", "v1"}, {"name", event.node}};
    if (!event.node_uid.empty()) involved["uid"] = event.node_uid;
  }
  json e = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", EventNamespace(event, options)}}},
      {"involvedObject", involved},
      {"reason", event.reason},
      {"message", message},
      {"type", event.type},
      {"source", {{"component", event.component}}},
      {"firstTimestamp", time},
      {"lastTimestamp", time},
      {"count", 1},
      {"reportingComponent", event.component},
      {"reportingInstance", options.reporting_instance},
  };
  return e;
}

}  // namespace faultline
