// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/reasons.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/time_format.h"
#include "tainter/core/annotation_json.h"

namespace faultline {
namespace {

nlohmann::json ReasonToJson(const Reason& r) {
  nlohmann::json j = {{"rule", r.rule},
                      {"summary", r.summary},
                      {"message", TruncateUtf8(r.message, kMaxReasonMessageBytes)},
                      {"event_id", r.event_id},
                      {"first_seen", FormatRfc3339(r.first_seen)},
                      {"last_seen", FormatRfc3339(r.last_seen)}};
  if (r.expires_at) j["expires_at"] = FormatRfc3339(*r.expires_at);
  if (!r.condition.empty()) j["condition"] = r.condition;
  if (!r.boot_id.empty()) j["boot_id"] = r.boot_id;
  if (!r.recover.empty()) j["recover"] = r.recover;
  if (r.probation) j["probation"] = FormatDuration(*r.probation);
  if (r.recurring) j["recurring"] = true;
  if (r.reboots > 0) j["reboots"] = r.reboots;
  if (r.inspection) j["inspection"] = true;
  if (!r.evidence.empty()) j["evidence"] = BoundEvidence(r.evidence);
  return j;
}

std::string Dump(const nlohmann::json& j) {
  // Replace, not throw, on invalid UTF-8 from a log line.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string EncodeReasons(const std::vector<Reason>& reasons, std::size_t max_bytes,
                          std::size_t* dropped) {
  if (dropped) *dropped = 0;
  // Oldest first: they are the ones to shrink when the list does not fit.
  std::vector<std::size_t> order(reasons.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return reasons[a].last_seen < reasons[b].last_seen;
  });
  nlohmann::json list = nlohmann::json::array();
  for (const Reason& r : reasons) list.push_back(ReasonToJson(r));
  std::string text = Dump(list);
  for (const char* field : {"evidence", "message", "summary"}) {
    for (std::size_t i : order) {
      if (text.size() <= max_bytes) return text;
      if (std::string_view(field) == "evidence") {
        if (list[i].erase(field) == 0) continue;  // nothing to drop, nothing to re-measure
      } else {
        list[i][field] = "";
      }
      text = Dump(list);
    }
  }
  // Still too big: drop whole reasons, expiring ones first (they lapse by
  // themselves; a permanent hardware reason is the one a person must see),
  // oldest first within each kind.
  std::vector<std::size_t> drop_order = order;
  std::stable_partition(drop_order.begin(), drop_order.end(),
                        [&](std::size_t i) { return reasons[i].expires_at.has_value(); });
  std::vector<bool> gone(reasons.size(), false);
  for (std::size_t i : drop_order) {
    if (text.size() <= max_bytes) break;
    gone[i] = true;
    if (dropped) ++*dropped;
    nlohmann::json kept = nlohmann::json::array();
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (!gone[k]) kept.push_back(list[k]);
    }
    text = Dump(kept);
  }
  return text;
}

Result<std::vector<Reason>> DecodeReasons(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("reasons annotation is not JSON");
  if (!j.is_array()) return InvalidArgumentError("reasons annotation is not a JSON list");
  std::vector<Reason> out;
  for (const nlohmann::json& item : j) {
    if (!item.is_object()) return InvalidArgumentError("reasons annotation holds a non-object");
    Reason r;
    r.rule = StringOr(item, "rule");
    if (r.rule.empty()) return InvalidArgumentError("a reason in the annotation has no 'rule'");
    r.summary = StringOr(item, "summary");
    r.message = StringOr(item, "message");
    r.event_id = StringOr(item, "event_id");
    r.first_seen = TimeOr(item, "first_seen");
    r.last_seen = TimeOr(item, "last_seen");
    if (auto it = item.find("expires_at"); it != item.end() && it->is_string()) {
      r.expires_at = ParseRfc3339(it->get<std::string>());
    }
    r.condition = StringOr(item, "condition");
    r.boot_id = StringOr(item, "boot_id");
    r.recover = StringOr(item, "recover");
    if (auto d = ParseDuration(StringOr(item, "probation")); d) {
      r.probation = std::chrono::duration_cast<std::chrono::seconds>(*d);
    }
    if (auto it = item.find("recurring"); it != item.end() && it->is_boolean()) {
      r.recurring = it->get<bool>();
    }
    if (auto it = item.find("reboots"); it != item.end() && it->is_number_integer()) {
      r.reboots = std::clamp(it->get<int>(), 0, 1000);
    }
    if (auto it = item.find("inspection"); it != item.end() && it->is_boolean()) {
      r.inspection = it->get<bool>();
    }
    if (auto it = item.find("evidence"); it != item.end() && it->is_array()) {
      for (const nlohmann::json& line : *it) {
        if (line.is_string()) r.evidence.push_back(line.get<std::string>());
      }
      r.evidence = BoundEvidence(std::move(r.evidence));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace faultline
