// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace faultline {

// Address -> node, from two witnesses: the Node objects' `status.addresses`
// (the node watch) and the identities the agents publish (interface
// addresses, IB/RoCE GIDs, hostname). Addresses are kept in canonical form
// (CanonicalAddress), so "::ffff:10.0.4.12", "10.0.4.12<33941>" and
// "10.0.4.12" are one key. A node's addresses from one witness replace its
// previous ones from that witness. Two nodes claiming one address: the one
// that claimed it last wins (a re-used IP belongs to its newest holder).
//
// Thread-safety: none; one thread owns it.
class AddressBook {
 public:
  enum class Witness { kNodeStatus, kIdentity };

  void Set(Witness witness, const std::string& node, const std::vector<std::string>& addresses);
  void Forget(const std::string& node);  // the Node was deleted
  // The node at `address` (any form CanonicalAddress reads), or a node
  // named so; nullopt when nobody claims it.
  std::optional<std::string> Resolve(std::string_view address) const;
  std::size_t size() const { return owner_.size(); }

 private:
  void Drop(const std::string& node, Witness witness);

  std::unordered_map<std::string, std::string> owner_;  // canonical address -> node
  std::map<std::pair<std::string, Witness>, std::set<std::string>> claims_;
};

}  // namespace faultline
