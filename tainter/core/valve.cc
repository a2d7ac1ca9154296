// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/valve.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/time_format.h"

namespace faultline {
namespace {

// "max_fraction: 3 of 20 managed nodes already tainted<scope>, limit 2".
std::string FractionRefusal(std::string_view limit_name, std::size_t tainted, int managed,
                            std::string_view scope, int limit) {
  return std::string(limit_name) + ": " + std::to_string(tainted) + " of " +
         std::to_string(managed) + " managed nodes already tainted" + std::string(scope) +
         ", limit " + std::to_string(limit);
}

// "max_new_taints: 5 new taints within 10m<scope>, limit 5".
std::string NewTaintsRefusal(std::size_t count, std::chrono::seconds window, std::string_view scope,
                             int limit) {
  return "max_new_taints: " + std::to_string(count) + " new taints within " +
         FormatDuration(window) + std::string(scope) + ", limit " + std::to_string(limit);
}

constexpr std::string_view kAcrossFleet = " across the fleet";

}  // namespace

int FleetValve::Allowed(double fraction, int managed) const {
  const int by_fraction =
      static_cast<int>(std::floor(fraction * static_cast<double>(managed) + 1e-9));
  return std::max(limits_.min_allowed, by_fraction);
}

std::string FleetValve::Refuse(int managed, int tainted, int tainted_for_rule,
                               const std::string& rule, std::chrono::steady_clock::time_point now) {
  if (const int limit = Allowed(limits_.max_fraction, managed); tainted + 1 > limit) {
    return FractionRefusal("max_fraction", tainted, managed, "", limit);
  }
  if (const int limit = Allowed(limits_.per_rule_max_fraction, managed);
      tainted_for_rule + 1 > limit) {
    return FractionRefusal("per_rule_max_fraction", tainted_for_rule, managed, " for rule " + rule,
                           limit);
  }
  if (limits_.max_new_taints > 0) {
    while (!recent_.empty() && now - recent_.front().at >= limits_.new_taint_window) {
      recent_.pop_front();
    }
    if (static_cast<int>(recent_.size()) >= limits_.max_new_taints) {
      return NewTaintsRefusal(recent_.size(), limits_.new_taint_window, "", limits_.max_new_taints);
    }
  }
  return "";
}

void FleetValve::UndoNewTaint(const std::string& node) {
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it) {
    if (it->node == node) {
      recent_.erase(std::next(it).base());
      return;
    }
  }
}

FleetValve::FleetAnswer FleetValve::Reserve(std::string_view record, const std::string& node,
                                            const FleetView& view,
                                            std::chrono::system_clock::time_point now) const {
  std::vector<ValveReservation> recent = DecodeRecord(record);
  std::erase_if(recent, [&](const ValveReservation& r) {
    return r.at <= now - limits_.new_taint_window && r.at <= now - kWatchGrace;
  });
  std::set<std::string> tainted = view.tainted;
  int in_window = 0;
  for (const ValveReservation& r : recent) {
    if (r.at > now - limits_.new_taint_window) ++in_window;
    if (r.at > now - kWatchGrace && r.node != node && view.unseen && view.unseen(r.node, r.at)) {
      tainted.insert(r.node);
    }
  }
  if (const int limit = FleetLimit(view.managed); static_cast<int>(tainted.size()) + 1 > limit) {
    return {FractionRefusal("max_fraction", tainted.size(), view.managed, kAcrossFleet, limit), ""};
  }
  if (limits_.max_new_taints > 0 && in_window >= limits_.max_new_taints) {
    return {NewTaintsRefusal(static_cast<std::size_t>(in_window), limits_.new_taint_window,
                             kAcrossFleet, limits_.max_new_taints),
            ""};
  }
  recent.push_back({node, now});
  return {"", EncodeRecord(recent)};
}

std::vector<ValveReservation> FleetValve::DecodeRecord(std::string_view text) {
  std::vector<ValveReservation> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const auto& item : j) {
    if (!item.is_object() || !item.contains("node") || !item["node"].is_string()) continue;
    auto at = ParseRfc3339(item.value("at", ""));
    if (at) out.push_back({item["node"].get<std::string>(), *at});
  }
  return out;
}

std::string FleetValve::EncodeRecord(const std::vector<ValveReservation>& reservations) {
  nlohmann::json j = nlohmann::json::array();
  for (const ValveReservation& r : reservations) {
    j.push_back({{"node", r.node}, {"at", FormatRfc3339(r.at)}});
  }
  return j.dump();
}

}  // namespace faultline
