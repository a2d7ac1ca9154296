// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace faultline {

// Why faultline keeps its taint on a node: one active rule. The node's
// annotation (default `faultline.dev/reasons`) holds the list as JSON, so the
// state survives tainter restarts and `kubectl describe node` shows it:
//   [{"rule":"nvidia.xid","summary":"Xid 79: …","message":"NVRM: Xid …",
//     "event_id":"…","first_seen":"2026-…Z","last_seen":"2026-…Z",
//     "expires_at":"2026-…Z"}]                       (expires_at absent: by hand)
struct Reason {
  // The rule of a reason made up for a node that carries our taint but no
  // annotation (tainted by hand, or by an older tainter): it never expires.
  static constexpr std::string_view kAdoptedRule = "adopted";

  std::string rule;
  std::string summary;
  std::string message;   // the log line, cut to kMaxReasonMessageBytes
  std::string event_id;  // the event that last refreshed this reason
  std::chrono::system_clock::time_point first_seen;
  std::chrono::system_clock::time_point last_seen;
  std::optional<std::chrono::system_clock::time_point> expires_at;  // nullopt: lifted by hand only
  // The NodeCondition type this reason holds True (tainter/core/conditions.h);
  // empty: none. Annotation key "condition", absent when empty.
  std::string condition;
  // Return to service (tainter/core/recovery.h). Annotation keys "boot_id",
  // "recover", "probation", "recurring", each absent when empty/unset.
  std::string boot_id;                            // the node's boot id the fault was last seen in
  std::string recover;                            // "reboot": lifted after a reboot and `probation`
  std::optional<std::chrono::seconds> probation;  // nullopt: the tainter's default
  bool recurring = false;  // faulted again soon after a recovery: lifted by hand only
  // Escalation (tainter/core/recovery.h): how many reboots the fault
  // survived (seen again in a later boot, or recurring after a reboot
  // lift), and whether that made it a case for hardware inspection (never
  // lifted automatically). Annotation keys "reboots", "inspection", absent
  // when 0/false.
  int reboots = 0;
  bool inspection = false;
  // The lines its source read just before the fault (FaultEvent::evidence,
  // same bounds), for `explain`. Annotation key "evidence", absent when
  // empty; the first thing dropped when the annotation does not fit.
  std::vector<std::string> evidence;

  friend bool operator==(const Reason&, const Reason&) = default;
};

inline constexpr std::size_t kMaxReasonMessageBytes = 512;
inline constexpr std::size_t kDefaultMaxAnnotationBytes = std::size_t{16} * 1024;

// The annotation's JSON text, at most `max_bytes` long. To fit, it first
// drops the evidence of the oldest reasons (by last_seen), then empties
// their messages, then their summaries, and only then drops whole reasons: expiring ones first,
// then permanent ones (no expires_at), oldest first within each; `dropped`, if given, receives how
// many reasons had to go.
std::string EncodeReasons(const std::vector<Reason>& reasons,
                          std::size_t max_bytes = kDefaultMaxAnnotationBytes,
                          std::size_t* dropped = nullptr);

// Parses the annotation. Never throws. kInvalidArgument: not a JSON list of
// objects with at least a string "rule"; unknown keys are ignored, and bad
// times read as "now unknown" (epoch) rather than failing the whole list.
Result<std::vector<Reason>> DecodeReasons(std::string_view text);

}  // namespace faultline
