// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/address_book.h"

#include "base/node_identity.h"

namespace faultline {

void AddressBook::Drop(const std::string& node, Witness witness) {
  auto it = claims_.find({node, witness});
  if (it == claims_.end()) return;
  for (const std::string& a : it->second) {
    auto o = owner_.find(a);
    if (o == owner_.end() || o->second != node) continue;
    // Still claimed by the node's other witness: keep it.
    const Witness other = witness == Witness::kIdentity ? Witness::kNodeStatus : Witness::kIdentity;
    auto alt = claims_.find({node, other});
    if (alt != claims_.end() && alt->second.count(a)) continue;
    owner_.erase(o);
  }
  claims_.erase(it);
}

void AddressBook::Set(Witness witness, const std::string& node,
                      const std::vector<std::string>& addresses) {
  Drop(node, witness);
  std::set<std::string>& mine = claims_[{node, witness}];
  for (const std::string& raw : addresses) {
    std::string a = CanonicalAddress(raw);
    if (a.empty()) continue;
    owner_[a] = node;
    mine.insert(std::move(a));
  }
}

void AddressBook::Forget(const std::string& node) {
  Drop(node, Witness::kNodeStatus);
  Drop(node, Witness::kIdentity);
}

std::optional<std::string> AddressBook::Resolve(std::string_view address) const {
  const std::string a = CanonicalAddress(address);
  if (a.empty()) return std::nullopt;
  if (auto it = owner_.find(a); it != owner_.end()) return it->second;
  // A node name (the host name is the node name on most clusters).
  auto it = claims_.lower_bound({a, Witness::kNodeStatus});
  if (it != claims_.end() && it->first.first == a) return a;
  return std::nullopt;
}

}  // namespace faultline
