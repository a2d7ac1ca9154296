// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/pod_index.h"

#include "base/node_identity.h"

namespace faultline {

void PodIndex::Erase(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  for (const std::string& ip : it->second.ips) {
    // Only if the IP is still this pod's (not re-used by a newer one).
    auto o = ip_pod_.find(ip);
    if (o != ip_pod_.end() && o->second == key) ip_pod_.erase(o);
  }
  pods_.erase(it);
}

void PodIndex::Replace(const std::vector<PodInfo>& pods) {
  pods_.clear();
  ip_pod_.clear();
  for (const PodInfo& p : pods) Upsert(p);
}

void PodIndex::Upsert(const PodInfo& pod) {
  const std::string key = pod.namespace_name + "/" + pod.name;
  Erase(key);
  if (pods_.size() >= options_.max_pods) {
    ++dropped_;
    return;
  }
  Entry e;
  e.node = pod.node_name;
  e.owner = {pod.owner_api_version, pod.owner_kind, pod.owner_name, pod.owner_uid};
  if (!pod.host_network && !pod.node_name.empty()) {
    for (const std::string& raw : pod.ips) {
      std::string ip = CanonicalAddress(raw);
      if (ip.empty()) continue;
      ip_pod_[ip] = key;  // the newest holder of a re-used IP
      e.ips.push_back(std::move(ip));
    }
  }
  pods_.emplace(key, std::move(e));
}

void PodIndex::Remove(const std::string& ns, const std::string& name) { Erase(ns + "/" + name); }

std::optional<std::string> PodIndex::NodeOf(std::string_view address) const {
  const std::string a = CanonicalAddress(address);
  if (a.empty()) return std::nullopt;
  auto o = ip_pod_.find(a);
  if (o == ip_pod_.end()) return std::nullopt;
  auto it = pods_.find(o->second);
  if (it == pods_.end() || it->second.node.empty()) return std::nullopt;
  return it->second.node;
}

std::optional<JobOwner> PodIndex::OwnerOf(const std::string& ns, const std::string& pod) const {
  auto it = pods_.find(ns + "/" + pod);
  if (it == pods_.end() || it->second.owner.name.empty()) return std::nullopt;
  return it->second.owner;
}

}  // namespace faultline
