// SPDX-License-Identifier: Apache-2.0
// ParseFaultEvent on arbitrary bytes: what the tainter does with every Kafka
// message value, so any producer with write access to the topic controls this
// input. Beyond "no crash": an accepted event survives a round trip through
// SerializeFaultEvent unchanged (the agent's writer and the tainter's reader
// agree), and a rejected one carries a message. Read as the tainter's
// consumers read (ParseFaultEventInto, into the buffers of the inputs run
// before it), every input gets the same answer as a fresh parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/fault_event.h"

namespace {

bool SameEvent(const faultline::FaultEvent& a, const faultline::FaultEvent& b) {
  return a.id == b.id && a.node == b.node && a.boot_id == b.boot_id && a.source == b.source &&
         a.origin == b.origin && a.rule == b.rule && a.pack == b.pack && a.category == b.category &&
         a.severity == b.severity && a.action == b.action && a.summary == b.summary &&
         a.fields == b.fields &&
         faultline::TruncateUtf8(a.message, faultline::FaultEvent::kMaxMessageBytes) == b.message &&
         a.log_time == b.log_time && a.detected_time == b.detected_time && a.labels == b.labels &&
         a.suppressed == b.suppressed && a.threshold == b.threshold && a.expire == b.expire;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  faultline::Result<faultline::FaultEvent> event = faultline::ParseFaultEvent(text);
  static faultline::FaultEvent reused;
  const faultline::Status into = faultline::ParseFaultEventInto(text, reused);
  if (into.ok() != event.ok()) std::abort();
  if (!into.ok() && into.ToString() != event.error().ToString()) std::abort();
  if (into.ok() &&
      (faultline::SerializeFaultEvent(reused) != faultline::SerializeFaultEvent(*event) ||
       reused.message != event->message || reused.evidence != event->evidence)) {
    std::abort();
  }
  if (!event.ok()) {
    if (event.error().message().empty()) std::abort();  // every refusal says why
    return 0;
  }
  const std::string again = faultline::SerializeFaultEvent(*event);
  faultline::Result<faultline::FaultEvent> reread = faultline::ParseFaultEvent(again);
  if (!reread.ok()) std::abort();  // we wrote something we cannot read
  if (!SameEvent(*event, *reread)) std::abort();
  return 0;
}
