// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace faultline {

// Who a node is on the network: what the agent publishes about itself (one
// Kafka message, key = node, on a compacted topic, so the latest per node is
// kept) and the tainter reads to resolve the addresses that fault lines name
// (an NCCL IB completion error's peer) to nodes. RoCE/IB GIDs never appear
// in Kubernetes' Node status; this is the only place the tainter learns them.
//
// JSON:
//   {"schema":1, "node":"gpu-17", "hostname":"gpu-17", "boot_id":"…",
//    "addresses":["10.0.4.17","fd00::17"], "gids":["fe80::2:c903:31:7c41"],
//    "published":"2026-11-22T07:02:53.179000Z"}
struct NodeIdentity {
  static constexpr int kSchemaVersion = 1;
  // Bounds on what one message may carry (it travels unauthenticated).
  static constexpr std::size_t kMaxAddresses = 256;
  static constexpr std::size_t kMaxAddressBytes = 64;

  std::string node;
  std::string hostname;
  std::string boot_id;
  std::vector<std::string> addresses;  // interface IPv4/IPv6 addresses, loopback excluded
  std::vector<std::string> gids;       // InfiniBand/RoCE port GIDs, zero GIDs excluded
  std::chrono::system_clock::time_point published;
};

std::string SerializeNodeIdentity(const NodeIdentity& identity);
// kInvalidArgument: not JSON, `node` missing or empty, a list not of strings
// (the message names the key); kFailedPrecondition: an unknown schema.
// Longer lists and entries are cut to the bounds above.
Result<NodeIdentity> ParseNodeIdentity(std::string_view json_text);

// The canonical text of an address as fault lines and identities write it,
// so that one address has one key: IPv4 as dotted quad; IPv6 (and GIDs,
// which are IPv6-formatted) in RFC 5952 form, an IPv4-mapped IPv6 address
// (a RoCE v2 GID of an IPv4 interface, "::ffff:10.0.4.12") as its IPv4
// address; brackets, a "%zone" and a ":port"/"<port>" suffix removed;
// anything else (a host name) lower-cased. Empty for empty input.
std::string CanonicalAddress(std::string_view text);

}  // namespace faultline
