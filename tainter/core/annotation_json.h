// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

namespace faultline {

// Readers of one field of an annotation's JSON object (the reasons and the
// recovery history, tainter/core/reasons.h and recovery.h). The annotations
// live on the node, where anyone with patch rights can write them: a field
// that is missing or of another type reads as empty, never throws.

// An RFC 3339 string field; the epoch when missing or unreadable.
std::chrono::system_clock::time_point TimeOr(const nlohmann::json& object, const char* key);
// A string field; "" when missing or not a string.
std::string StringOr(const nlohmann::json& object, const char* key);

}  // namespace faultline
