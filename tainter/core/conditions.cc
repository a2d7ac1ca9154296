// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/conditions.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace faultline {
namespace {

constexpr std::size_t kMaxConditionMessageBytes = 1024;
constexpr std::size_t kMaxConditionReasonChars = 128;

const NodeCondition* Find(const std::vector<NodeCondition>& live, std::string_view type) {
  for (const NodeCondition& c : live) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

int StateRank(std::string_view state) {
  if (state == kNeedsInspectionReason) return 3;
  if (state == kValidationFailedReason) return 2;
  if (state == kAwaitingValidationReason) return 1;
  return 0;
}

}  // namespace

std::string ConditionTypeForCategory(std::string_view category) {
  if (category == "hardware" || category == "driver-firmware" || category == "sympathetic") {
    return std::string(kGpuFaultCondition);
  }
  if (category == "network") return std::string(kNetworkFaultCondition);
  if (category == "memory" || category == "storage" || category == "system") {
    return std::string(kHostFaultCondition);
  }
  return {};
}

std::string ConditionTypeFor(const FaultEvent& event) {
  if (!event.condition.empty()) return event.condition;
  return ConditionTypeForCategory(event.category);
}

std::string ConditionReason(std::string_view rule) {
  std::string out;
  bool upper = true;
  for (char c : rule) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  // A reason starts with a letter; a rule id may start with a digit.
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out.insert(0, "Rule");
  return out.substr(0, kMaxConditionReasonChars);
}

std::vector<NodeCondition> ConditionUpdates(const std::vector<NodeCondition>& live,
                                            const std::vector<Reason>& active,
                                            const std::set<std::string>& owned,
                                            std::chrono::system_clock::time_point now,
                                            const std::map<std::string, Waiting>& waits) {
  // type -> its active reasons, earliest first (stable: the fault that made
  // the condition True keeps naming it while later ones join).
  std::map<std::string, std::vector<const Reason*>> by_type;
  for (const Reason& r : active) {
    if (!r.condition.empty()) by_type[r.condition].push_back(&r);
  }
  for (auto& [type, reasons] : by_type) {
    std::sort(reasons.begin(), reasons.end(), [](const Reason* a, const Reason* b) {
      return a->first_seen != b->first_seen ? a->first_seen < b->first_seen : a->rule < b->rule;
    });
  }

  const std::string stamp = KubeTime(now);
  std::vector<NodeCondition> out;
  auto want = [&](const std::string& type, std::string status, std::string reason,
                  std::string message) {
    message = TruncateUtf8(message, kMaxConditionMessageBytes);
    const NodeCondition* cur = Find(live, type);
    if (cur && cur->status == status && cur->reason == reason && cur->message == message) return;
    NodeCondition c{type, std::move(status), std::move(reason), std::move(message), stamp, stamp};
    if (cur && cur->status == c.status && !cur->last_transition_time.empty()) {
      c.last_transition_time = cur->last_transition_time;
    }
    out.push_back(std::move(c));
  };

  for (const auto& [type, reasons] : by_type) {
    const Reason& first = *reasons.front();
    std::string message = first.rule + ": " + (first.summary.empty() ? first.rule : first.summary);
    if (reasons.size() > 1) {
      message += " (+" + std::to_string(reasons.size() - 1) + " more:";
      for (std::size_t i = 1; i < reasons.size(); ++i) message += " " + reasons[i]->rule;
      message += ")";
    }
    // The gravest return-to-service state among the type's reasons.
    const Waiting* wait = nullptr;
    int rank = 0;
    for (const Reason* r : reasons) {
      auto w = waits.find(r->rule);
      if (w == waits.end()) continue;
      const int rk = StateRank(w->second.state);
      if (rk > rank) {
        rank = rk;
        wait = &w->second;
      }
    }
    if (wait) {
      message += "; waits for: " + wait->text;
      want(type, "True", wait->state, std::move(message));
    } else {
      want(type, "True", ConditionReason(first.rule), std::move(message));
    }
  }
  for (const std::string& type : owned) {
    if (by_type.count(type) != 0) continue;
    const NodeCondition* cur = Find(live, type);
    if (!cur || cur->status != "True") continue;
    want(type, "False", std::string(kConditionLiftedReason),
         "faultline has no active fault of this kind on the node");
  }
  return out;
}

}  // namespace faultline
