// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/ibcounters_diff.h"

#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

namespace faultline {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Prefix(const IbPortKey& key) { return key.device + " port " + key.port; }

void DiffText(const IbPortKey& key, const char* what, const std::optional<std::string>& before,
              const std::optional<std::string>& after, std::vector<IbChange>& out) {
  if (!before || !after || *before == *after) return;
  out.push_back({key, what, Prefix(key) + " " + what + " " + *before + " -> " + *after});
}

}  // namespace

std::optional<std::string> ParseSysfsState(std::string_view raw) {
  std::string_view s = Trim(raw);
  // sysfs prints "<number>: <NAME>"; the number is the IBTA enum value.
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits > 0 && digits < s.size() && s[digits] == ':') s = Trim(s.substr(digits + 1));
  if (s.empty()) return std::nullopt;
  return std::string(s);
}

std::optional<std::uint64_t> ParseSysfsCounter(std::string_view raw) {
  std::string_view s = Trim(raw);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::vector<IbChange> DiffIbSnapshots(const IbSnapshot& before, const IbSnapshot& after) {
  std::vector<IbChange> out;
  for (const auto& [key, now] : after) {
    auto it = before.find(key);
    if (it == before.end()) {
      std::string text = Prefix(key) + " appeared";
      if (now.state) text += ", state " + *now.state;
      out.push_back({key, "port", std::move(text)});
      continue;
    }
    const IbPortState& then = it->second;
    DiffText(key, "state", then.state, now.state, out);
    DiffText(key, "phys_state", then.phys_state, now.phys_state, out);
    for (std::string_view name : kIbCounterNames) {
      auto a = then.counters.find(std::string(name));
      auto b = now.counters.find(std::string(name));
      if (a == then.counters.end() || b == now.counters.end() || b->second <= a->second) continue;
      out.push_back({key, std::string(name),
                     Prefix(key) + " " + std::string(name) + " +" +
                         std::to_string(b->second - a->second) + " (total " +
                         std::to_string(b->second) + ")"});
    }
  }
  for (const auto& [key, then] : before) {
    if (after.count(key) == 0) out.push_back({key, "port", Prefix(key) + " disappeared"});
  }
  return out;
}

std::vector<IbChange> DescribeInitialIbSnapshot(const IbSnapshot& first) {
  std::vector<IbChange> out;
  for (const auto& [key, port] : first) {
    if (port.state && *port.state != "ACTIVE") {
      out.push_back({key, "state", Prefix(key) + " state " + *port.state + " at start"});
    }
  }
  return out;
}

std::string IbSnapshotToJson(const IbSnapshot& snapshot) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& [key, port] : snapshot) {
    nlohmann::json p = {{"device", key.device}, {"port", key.port}, {"counters", port.counters}};
    if (port.state) p["state"] = *port.state;
    if (port.phys_state) p["phys_state"] = *port.phys_state;
    ports.push_back(std::move(p));
  }
  // sysfs text is not guaranteed UTF-8; dump() would throw on it.
  return nlohmann::json{{"ports", std::move(ports)}}.dump(-1, ' ', false,
                                                          nlohmann::json::error_handler_t::replace);
}

Result<IbSnapshot> IbSnapshotFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ports") || !j["ports"].is_array()) {
    return InvalidArgumentError("not an ibcounters snapshot: no \"ports\" array");
  }
  IbSnapshot snapshot;
  for (const nlohmann::json& p : j["ports"]) {
    if (!p.is_object() || !p.contains("device") || !p["device"].is_string() ||
        !p.contains("port") || !p["port"].is_string()) {
      return InvalidArgumentError("ibcounters snapshot: a port without device and port names");
    }
    IbPortState state;
    if (p.contains("state") && p["state"].is_string()) state.state = p["state"].get<std::string>();
    if (p.contains("phys_state") && p["phys_state"].is_string()) {
      state.phys_state = p["phys_state"].get<std::string>();
    }
    if (p.contains("counters") && p["counters"].is_object()) {
      for (const auto& [name, value] : p["counters"].items()) {
        if (!value.is_number_unsigned()) {
          return InvalidArgumentError("ibcounters snapshot: counter " + name + " is not a number");
        }
        state.counters[name] = value.get<std::uint64_t>();
      }
    }
    snapshot[{p["device"].get<std::string>(), p["port"].get<std::string>()}] = std::move(state);
  }
  return snapshot;
}

}  // namespace faultline
