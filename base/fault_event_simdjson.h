// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string_view>

#include "base/fault_event.h"
#include "base/status.h"

namespace faultline {

// ParseFaultEvent's fast path: simdjson's DOM parser (one pass, SIMD UTF-8
// and structure validation, about 20 times nlohmann's speed on an event)
// feeding the same validation as FaultEventFromJson. nullopt when simdjson
// does not take the document: not JSON, or JSON it reads differently from
// nlohmann (integers beyond 64 bits, which nlohmann reads as doubles;
// nesting deeper than 1024); ParseFaultEvent then reads it with nlohmann, so every input gets
// exactly the result and message it always got. One parser per thread.
// The event is read into `event` (ParseFaultEventInto).
std::optional<Status> ParseFaultEventSimdjson(std::string_view json_text, FaultEvent& event,
                                              EventFields fields = EventFields::kKeep);

}  // namespace faultline
