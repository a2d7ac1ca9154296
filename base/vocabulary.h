// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace faultline {

// The origin of a record, which is what a rule's `sources:` trusts. It is not
// the Source that read it: a journal entry with _TRANSPORT=kernel has origin
// kKernel, because the kernel wrote it; any other journal entry has kJournal.
enum class Origin : std::uint8_t {
  kKernel,      // a /dev/kmsg record, or a journal entry with _TRANSPORT=kernel
  kJournal,     // a user-space journal entry (anyone may write these)
  kPod,         // a container's stdout/stderr (anyone in the pod may write these)
  kIbCounters,  // a change the ibcounters source saw in sysfs
  kCheck,       // a result of the agent's active checks (collector/checks); only the
                // checks source makes these, so no log line can claim it
  kAny,         // unknown (`faultline scan --source any`): every rule applies
};

// What a rule asks the tainter to do with a match.
enum class Action : std::uint8_t {
  kIgnore,  // recognised and deliberately dropped (never published)
  kEvent,   // published and recorded on the node as an Event; never taints
  kTaint,   // taints the node once the rule's threshold, if any, is reached
};

enum class Severity : std::uint8_t { kInfo, kWarning, kError, kCritical };

// Lower-case names as rule packs and the event JSON spell them, and back.
std::string_view OriginName(
    Origin origin);  // "kernel", "journal", "pod", "ibcounters", "check", "any"
std::string_view ActionName(Action action);        // "ignore", "event", "taint"
std::string_view SeverityName(Severity severity);  // "info", "warning", "error", "critical"
std::optional<Origin> ParseOrigin(std::string_view name);
std::optional<Action> ParseAction(std::string_view name);
std::optional<Severity> ParseSeverity(std::string_view name);

}  // namespace faultline
