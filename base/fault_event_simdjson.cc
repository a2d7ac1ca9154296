// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event_simdjson.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <string>

#include "base/fault_event_reader.h"

namespace faultline {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// event_reader's View over a simdjson DOM element.
class SimdjsonView {
 public:
  explicit SimdjsonView(element e) : e_(e) {}

  bool is_object() const { return e_.type() == element_type::OBJECT; }
  bool is_array() const { return e_.type() == element_type::ARRAY; }
  bool is_null() const { return e_.type() == element_type::NULL_VALUE; }
  bool is_string() const { return e_.type() == element_type::STRING; }
  // nlohmann's number_integer and number_unsigned; a double (1.0, 1e0) is neither.
  bool is_integer() const {
    return e_.type() == element_type::INT64 || e_.type() == element_type::UINT64;
  }
  // simdjson keeps non-negative integers up to INT64_MAX as INT64 (nlohmann
  // as unsigned): the reader asks is_unsigned() only together with
  // as_int64() >= 0, which is the same for both.
  bool is_unsigned() const { return e_.type() == element_type::UINT64; }
  std::int64_t as_int64() const {
    if (e_.type() == element_type::UINT64) {
      return static_cast<std::int64_t>(std::uint64_t(e_.get_uint64().value_unsafe()));
    }
    return e_.get_int64().value_unsafe();
  }
  std::uint64_t as_uint64() const {
    if (e_.type() == element_type::UINT64) return e_.get_uint64().value_unsafe();
    return static_cast<std::uint64_t>(e_.get_int64().value_unsafe());
  }
  std::string_view as_string() const { return e_.get_string().value_unsafe(); }
  std::string dump() const {
    return e_.type() == element_type::UINT64 ? std::to_string(as_uint64())
                                             : std::to_string(as_int64());
  }
  // Linear, keeping the last of a repeated key (nlohmann's object keeps the
  // last): an event has about twenty keys, so this is cheaper than a map.
  std::optional<SimdjsonView> find(std::string_view key) const {
    std::optional<SimdjsonView> found;
    for (auto [k, v] : object()) {
      if (k == key) found.emplace(v);
    }
    return found;
  }
  template <class F>
  Status members(F f) const {
    std::map<std::string_view, element> sorted;  // nlohmann's order: by key, last repeat wins
    for (auto [k, v] : object()) sorted.insert_or_assign(k, v);
    for (const auto& [k, v] : sorted) FL_RETURN_IF_ERROR(f(k, SimdjsonView(v)));
    return OkStatus();
  }
  template <class F>
  Status elements(F f) const {
    const simdjson::dom::array array =
        e_.get_array().value_unsafe();  // a copy: the result is a temporary
    for (element v : array) FL_RETURN_IF_ERROR(f(SimdjsonView(v)));
    return OkStatus();
  }

 private:
  // A copy of the handle: iterating the temporary result itself would
  // dangle (range-for keeps only the reference value_unsafe() returns).
  simdjson::dom::object object() const { return e_.get_object().value_unsafe(); }

  element e_;
};

// JSON forbids raw bytes below 0x20 inside strings, and allows only blanks
// outside them. nlohmann and simdjson agree on that, but a message holding
// one is never one our writer made: leave such rare input to nlohmann
// rather than depend on two parsers' agreement on it.
bool HasControlBytes(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 && b != ' ' && b != '\t' && b != '\n' && b != '\r';
  });
}

}  // namespace

std::optional<Result<FaultEvent>> ParseFaultEventSimdjson(std::string_view json_text) {
  if (HasControlBytes(json_text)) return std::nullopt;
  // Reused: its buffers grow to the largest event seen and stay.
  thread_local simdjson::dom::parser parser;
  element root;
  if (parser.parse(json_text.data(), json_text.size(), /*realloc_if_needed=*/true).get(root)) {
    return std::nullopt;
  }
  return event_reader::ReadFaultEvent(SimdjsonView(root));
}

}  // namespace faultline
