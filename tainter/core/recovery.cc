// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/recovery.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/time_format.h"
#include "tainter/core/annotation_json.h"

namespace faultline {
namespace {

constexpr std::size_t kMaxDetailBytes = 256;

void KeepNewest(std::vector<Recovery>& history) {
  if (history.size() > kMaxRecoveryHistory) {
    history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(
                                                         history.size() - kMaxRecoveryHistory));
  }
}

}  // namespace

std::string EncodeRecoveries(const std::vector<Recovery>& history) {
  nlohmann::json list = nlohmann::json::array();
  for (const Recovery& r : history) {
    list.push_back({{"rule", r.rule},
                    {"how", r.how},
                    {"at", FormatRfc3339(r.at)},
                    {"detail", TruncateUtf8(r.detail, kMaxDetailBytes)},
                    {"first_seen", FormatRfc3339(r.first_seen)},
                    {"last_seen", FormatRfc3339(r.last_seen)}});
    if (!r.boot_id.empty()) list.back()["boot_id"] = r.boot_id;
    if (r.how == kHowValidation) list.back()["passed"] = r.passed;
  }
  // Replace, not throw, on invalid UTF-8 (the detail may quote a log line).
  return list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Recovery> DecodeRecoveries(std::string_view text) {
  std::vector<Recovery> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const nlohmann::json& item : j) {
    if (!item.is_object()) continue;
    Recovery r;
    r.rule = StringOr(item, "rule");
    r.how = StringOr(item, "how");
    r.detail = StringOr(item, "detail");
    auto at = ParseRfc3339(StringOr(item, "at"));
    if (r.rule.empty() || !at) continue;
    r.at = *at;
    r.first_seen = TimeOr(item, "first_seen");
    r.last_seen = TimeOr(item, "last_seen");
    r.boot_id = StringOr(item, "boot_id");
    if (auto p = item.find("passed"); p != item.end() && p->is_boolean()) r.passed = p->get<bool>();
    AppendRecovery(out, std::move(r));
  }
  return out;
}

void AppendRecovery(std::vector<Recovery>& history, Recovery r) {
  r.detail = TruncateUtf8(r.detail, kMaxDetailBytes);
  history.push_back(std::move(r));
  KeepNewest(history);
}

std::vector<Recovery> MergeRecoveries(std::vector<Recovery> a, const std::vector<Recovery>& b) {
  for (const Recovery& r : b) {
    const bool known = std::any_of(a.begin(), a.end(), [&](const Recovery& x) {
      // The annotation keeps microseconds: memory's copy of an entry read
      // back from the node differs below that and is still the same entry.
      using std::chrono::microseconds;
      return x.rule == r.rule && x.how == r.how &&
             std::chrono::duration_cast<microseconds>(x.at.time_since_epoch()) ==
                 std::chrono::duration_cast<microseconds>(r.at.time_since_epoch());
    });
    if (!known) a.push_back(r);
  }
  std::stable_sort(a.begin(), a.end(),
                   [](const Recovery& x, const Recovery& y) { return x.at < y.at; });
  KeepNewest(a);
  return a;
}

bool RebootRecoveryDue(const Reason& reason, std::string_view boot_id,
                       std::chrono::system_clock::time_point boot_seen_at,
                       std::chrono::system_clock::time_point now,
                       std::chrono::seconds default_probation) {
  if (reason.recover != kRecoverReboot || reason.recurring || reason.inspection) return false;
  // An unknown boot id on either side proves no reboot.
  if (reason.boot_id.empty() || boot_id.empty() || reason.boot_id == boot_id) return false;
  const auto quiet_since = std::max(reason.last_seen, boot_seen_at);
  return now - quiet_since >= reason.probation.value_or(default_probation);
}

const Recovery* LatestValidation(const std::vector<Recovery>& history, std::string_view boot_id) {
  if (boot_id.empty()) return nullptr;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->how == kHowValidation && it->boot_id == boot_id) return &*it;
  }
  return nullptr;
}

Waiting WaitingFor(const Reason& reason, std::string_view boot_id, const Recovery* validation,
                   bool require_validation) {
  if (reason.inspection) {
    return {std::string(kNeedsInspectionReason), "hardware inspection: the fault survived " +
                                                     std::to_string(reason.reboots) +
                                                     " reboots; only a person lifts it"};
  }
  if (reason.recurring) return {"", "a person (recurring after an automatic recovery)"};
  if (reason.recover != kRecoverReboot) {
    if (reason.expires_at) return {"", "quiet until " + FormatRfc3339(*reason.expires_at)};
    return {"", "a person (faultline-tainter untaint), or a clear line"};
  }
  if (reason.boot_id.empty() || boot_id.empty() || reason.boot_id == boot_id) {
    return {"", "a reboot (boot id " +
                    (boot_id.empty() ? std::string("unknown") : std::string(boot_id)) + ")"};
  }
  if (validation && !validation->passed) {
    return {std::string(kValidationFailedReason), "a passing check round in boot " +
                                                      std::string(boot_id) +
                                                      "; the last failed: " + validation->detail};
  }
  if (require_validation && !validation) {
    return {std::string(kAwaitingValidationReason),
            "a passing check round in boot " + std::string(boot_id) +
                " (rebooted; no complete round reported yet), then quiet for the probation"};
  }
  return {std::string(kAwaitingValidationReason),
          "quiet for the probation after the reboot (" +
              (validation ? "checks passed in boot " + std::string(boot_id)
                          : std::string("checks not required")) +
              ")"};
}

void MarkInspection(Reason& reason) {
  reason.inspection = true;
  reason.recover.clear();
  reason.probation.reset();
  reason.expires_at.reset();
  constexpr std::string_view kPrefix = "needs inspection: ";
  if (reason.summary.rfind(kPrefix, 0) != 0) {
    reason.summary =
        TruncateUtf8(std::string(kPrefix) + "survived " + std::to_string(reason.reboots) +
                         " reboots: " + reason.summary,
                     FaultEvent::kMaxSummaryBytes);
  }
}

int RebootLifts(const std::vector<Recovery>& history, std::string_view rule,
                std::chrono::system_clock::time_point now, std::chrono::seconds window) {
  return static_cast<int>(std::count_if(history.begin(), history.end(), [&](const Recovery& r) {
    return r.rule == rule && r.how == kRecoverReboot && now - r.at <= window;
  }));
}

const Recovery* RecentAutoRecovery(const std::vector<Recovery>& history, std::string_view rule,
                                   std::chrono::system_clock::time_point now,
                                   std::chrono::seconds window) {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->rule != rule || (it->how != "reboot" && it->how != "clear")) continue;
    return now - it->at <= window ? &*it : nullptr;  // older ones are older still
  }
  return nullptr;
}

void MarkRecurring(Reason& reason, const Recovery& previous) {
  reason.recurring = true;
  reason.recover.clear();
  reason.probation.reset();
  reason.expires_at.reset();
  constexpr std::string_view kPrefix = "recurring after ";
  if (reason.summary.rfind(kPrefix, 0) != 0) {
    reason.summary = TruncateUtf8(std::string(kPrefix) + previous.how + " recovery at " +
                                      FormatRfc3339(previous.at) + ": " + reason.summary,
                                  FaultEvent::kMaxSummaryBytes);
  }
}

void DropRecovered(std::vector<Reason>& live, const std::vector<Recovery>& lifted) {
  std::erase_if(live, [&](const Reason& r) {
    return std::any_of(lifted.begin(), lifted.end(), [&](const Recovery& l) {
      return l.rule == r.rule && r.last_seen <= l.last_seen;
    });
  });
}

std::string RecoveryLine(const Recovery& r) {
  std::string text = FormatRfc3339(r.at) + " " + r.how + " " + r.rule;
  if (r.how == kHowValidation) text += r.passed ? " passed" : " failed";
  if (!r.boot_id.empty() && r.how != kHowRebooted) text += " (boot " + r.boot_id + ")";
  if (!r.detail.empty()) text += ": " + r.detail;
  return text;
}

std::string InspectionMessage(const Reason& reason, const std::vector<Recovery>& history) {
  std::string text = reason.rule + " needs hardware inspection: it survived " +
                     std::to_string(reason.reboots) +
                     " reboots; faultline will not lift it (label " +
                     std::string(kNeedsInspectionLabel) + "=true); history:";
  // The newest entries that fit, oldest first: the latest reboots matter most.
  constexpr std::size_t kMaxBytes = 1024;
  std::vector<std::string> lines;
  std::size_t room = text.size() < kMaxBytes ? kMaxBytes - text.size() : 0;
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    std::string line = "\n" + RecoveryLine(*it);
    if (line.size() > room) break;
    room -= line.size();
    lines.push_back(std::move(line));
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) text += *it;
  return TruncateUtf8(text, kMaxBytes);
}

std::string RecoveredMessage(const Recovery& r) {
  std::string text = r.rule + " recovered (" + r.how;
  if (!r.detail.empty()) text += ": " + r.detail;
  text += ")";
  return TruncateUtf8(text, 1024);
}

}  // namespace faultline
