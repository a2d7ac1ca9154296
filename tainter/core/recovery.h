// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tainter/core/reasons.h"

namespace faultline {

// Return to service: how a fault's reason leaves a node, and the node's
// record of it (tainter/README.md "Return to service").
//
// A reason ends by one of:
//   expire  its quiet period (`expire`) passed
//   hand    a person ran `faultline-tainter untaint`
//   reboot  `recover: reboot`: the node's status.nodeInfo.bootID differs
//           from the one the fault was last seen in, and no new fault of the
//           rule came for `probation` since the later of that last sighting
//           and the moment the tainter saw the new boot id
//   clear   a `clear:` rule matched a recovery line naming the rule
// A reason marked `recurring` (faulted again within recurring_window after a
// reboot or clear recovery) ends only by hand: flapping hardware goes to a
// person.
//
// Verified lift (issue 28). A `reboot` lift also needs the node's agent to
// have reported, in the node's current boot, a passing round of its active
// checks (the rule `check.round`, collector/checks/check_source.h "Rounds");
// the history keeps that round. A failing round, or a new tainting fault in
// the new boot, is a failed validation: the node stays out.
//
// Escalation: a fault seen again in a later boot (or recurring after a
// reboot lift) survived that reboot; once it survived
// `inspection_after_reboots` of them it is marked for hardware inspection
// and never lifted automatically.
//
// The history also records what happened on the way, as entries of their
// own `how`: "rebooted" (rule "boot": the node's boot id changed while
// faultline held it), "validation" (rule check.round: a round's verdict in
// a boot, with its boot id) and "inspection" (a reason escalated).
struct Recovery {
  std::string rule;
  std::string how;     // expire | hand | reboot | clear | rebooted | validation | inspection
  std::string detail;  // "boot id 1a2b… -> 9f8e…, quiet for 10m", the clear rule, the untaint text
  std::chrono::system_clock::time_point at;          // when it was lifted
  std::chrono::system_clock::time_point first_seen;  // of the fault
  std::chrono::system_clock::time_point last_seen;   // of the fault
  // "validation", "rebooted" and "reboot": the boot the entry is about (the
  // round's boot; the new boot). Annotation key "boot_id", absent when empty.
  std::string boot_id;
  bool passed = false;  // "validation": the round's verdict ("passed")

  friend bool operator==(const Recovery&, const Recovery&) = default;
};

// The history kept per node, newest last; older entries drop off.
inline constexpr std::size_t kMaxRecoveryHistory = 16;
inline constexpr std::string_view kRecoverReboot = "reboot";
inline constexpr std::string_view kRoundRule = "check.round";
inline constexpr std::string_view kHowValidation = "validation";
inline constexpr std::string_view kHowRebooted = "rebooted";
inline constexpr std::string_view kHowInspection = "inspection";

// Condition reasons of the return-to-service states, stable per state (a
// repair controller may key on them); the message carries the detail.
inline constexpr std::string_view kAwaitingValidationReason = "AwaitingValidation";
inline constexpr std::string_view kValidationFailedReason = "ValidationFailed";
inline constexpr std::string_view kNeedsInspectionReason = "NeedsInspection";
// The node label an RMA workflow selects on (`-l faultline.dev/needs-inspection=true`).
inline constexpr std::string_view kNeedsInspectionLabel = "faultline.dev/needs-inspection";

// The history annotation (default `faultline.dev/recoveries`), a JSON list:
//   [{"rule":"nvidia.xid","how":"reboot","at":"…Z","detail":"…",
//     "first_seen":"…Z","last_seen":"…Z"}]
std::string EncodeRecoveries(const std::vector<Recovery>& history);
// Lenient: entries without a rule or a readable "at" are skipped; text that
// is not a JSON list reads as no history.
std::vector<Recovery> DecodeRecoveries(std::string_view text);
// Adds `r`, keeping the newest kMaxRecoveryHistory entries.
void AppendRecovery(std::vector<Recovery>& history, Recovery r);
// The union of both (the same rule, how and time once), oldest first, bounded.
std::vector<Recovery> MergeRecoveries(std::vector<Recovery> a, const std::vector<Recovery>& b);

// The newest validation entry for `boot_id` in `history`, or nullptr.
const Recovery* LatestValidation(const std::vector<Recovery>& history, std::string_view boot_id);

// What a reason waits for before it can go, for the condition and `explain`:
//   state  "" (a rule-specific wait: expiry, a person, a clear line, a reboot),
//          AwaitingValidation, ValidationFailed or NeedsInspection
//   text   for people: "a reboot", "a passing check round in boot 9a0b…", ...
struct Waiting {
  std::string state;
  std::string text;
};
// `boot_id`: the node's current boot id; `validation`: LatestValidation for
// it; `require_validation`: the tainter's recovery.require_validation.
Waiting WaitingFor(const Reason& reason, std::string_view boot_id, const Recovery* validation,
                   bool require_validation);

// Marks `reason` for hardware inspection: no `recover`, no expiry.
void MarkInspection(Reason& reason);

// Reboot lifts of `rule` in `history` within `window` before `now`.
int RebootLifts(const std::vector<Recovery>& history, std::string_view rule,
                std::chrono::system_clock::time_point now, std::chrono::seconds window);

// Whether `reason` is lifted by a reboot now: it says `recover: reboot`, is
// not recurring, was seen in a known boot id that differs from the node's
// `boot_id`, and it stayed quiet for its probation (else
// `default_probation`) since max(last_seen, boot_seen_at).
bool RebootRecoveryDue(const Reason& reason, std::string_view boot_id,
                       std::chrono::system_clock::time_point boot_seen_at,
                       std::chrono::system_clock::time_point now,
                       std::chrono::seconds default_probation);

// The most recent automatic recovery (reboot or clear) of `rule`, if it lies
// within `window` before `now`; else nullptr. A new fault of the rule then
// recurs.
const Recovery* RecentAutoRecovery(const std::vector<Recovery>& history, std::string_view rule,
                                   std::chrono::system_clock::time_point now,
                                   std::chrono::seconds window);

// Marks `reason` recurring: no `recover`, no expiry, "recurring" in its summary.
void MarkRecurring(Reason& reason, const Recovery& previous);

// Drops from `live` (a node's annotation as re-read) the reasons that
// `lifted` took away, unless the live copy was seen after the lift's
// (another replica's newer sighting keeps it).
void DropRecovered(std::vector<Reason>& live, const std::vector<Recovery>& lifted);

// The Event of an escalation: "nvidia.xid needs hardware inspection: it
// survived 2 reboots; history: <entries, newest last>", bounded to 1 KiB.
std::string InspectionMessage(const Reason& reason, const std::vector<Recovery>& history);

// One history entry for people: "2026-…Z reboot nvidia.xid: boot id a -> b, …".
std::string RecoveryLine(const Recovery& r);

// "nvidia.xid recovered (reboot: boot id a -> b, quiet for 10m)", bounded.
std::string RecoveredMessage(const Recovery& r);

}  // namespace faultline
