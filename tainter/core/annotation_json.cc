// SPDX-License-Identifier: Apache-2.0
#include "tainter/core/annotation_json.h"

#include "base/time_format.h"

namespace faultline {

std::chrono::system_clock::time_point TimeOr(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return ParseRfc3339(it->get<std::string>()).value_or(std::chrono::system_clock::time_point{});
}

std::string StringOr(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace faultline
