// SPDX-License-Identifier: Apache-2.0
#include "base/node_identity.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "base/time_format.h"

namespace faultline {
namespace {

using nlohmann::json;

Result<std::vector<std::string>> StringList(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return InvalidArgumentError(std::string("identity key '") + key +
                                "' must be a list of strings");
  }
  for (const json& v : *it) {
    if (!v.is_string()) {
      return InvalidArgumentError(std::string("identity key '") + key +
                                  "' must be a list of strings");
    }
    if (out.size() >= NodeIdentity::kMaxAddresses) break;
    std::string s = v.get<std::string>();
    if (s.size() > NodeIdentity::kMaxAddressBytes) s.resize(NodeIdentity::kMaxAddressBytes);
    out.push_back(std::move(s));
  }
  return out;
}

std::string OptionalString(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string SerializeNodeIdentity(const NodeIdentity& id) {
  json j = {{"schema", NodeIdentity::kSchemaVersion},
            {"node", id.node},
            {"hostname", id.hostname},
            {"boot_id", id.boot_id},
            {"addresses", id.addresses},
            {"gids", id.gids},
            {"published", FormatRfc3339(id.published)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<NodeIdentity> ParseNodeIdentity(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("identity is not a JSON object");
  }
  if (auto it = j.find("schema"); it != j.end() && it->is_number_integer() &&
                                  it->get<long long>() != NodeIdentity::kSchemaVersion) {
    return FailedPreconditionError("identity schema " + it->dump() + " is not understood");
  }
  NodeIdentity id;
  id.node = OptionalString(j, "node");
  if (id.node.empty()) return InvalidArgumentError("identity key 'node' is missing or empty");
  id.hostname = OptionalString(j, "hostname");
  id.boot_id = OptionalString(j, "boot_id");
  auto addresses = StringList(j, "addresses");
  if (!addresses) return addresses.error();
  id.addresses = std::move(*addresses);
  auto gids = StringList(j, "gids");
  if (!gids) return gids.error();
  id.gids = std::move(*gids);
  if (auto t = ParseRfc3339(OptionalString(j, "published"))) id.published = *t;
  return id;
}

std::string CanonicalAddress(std::string_view text) {
  std::string s(text);
  // "[fe80::1]:4791", "10.0.4.12<33941>", "10.0.4.12:33941", "fe80::1%ib0"
  if (auto lt = s.find('<'); lt != std::string::npos) s.resize(lt);
  if (!s.empty() && s.front() == '[') {
    auto close = s.find(']');
    s = s.substr(1, close == std::string::npos ? std::string::npos : close - 1);
  }
  if (auto pct = s.find('%'); pct != std::string::npos) s.resize(pct);
  if (std::count(s.begin(), s.end(), ':') == 1) s.resize(s.find(':'));  // host:port
  if (s.empty()) return s;
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    char buf[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &v4, buf, sizeof(buf));
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      char buf[INET_ADDRSTRLEN];
      return inet_ntop(AF_INET, &v6.s6_addr[12], buf, sizeof(buf));
    }
    char buf[INET6_ADDRSTRLEN];
    return inet_ntop(AF_INET6, &v6, buf, sizeof(buf));
  }
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace faultline
