// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event_simdjson.h"

#include <simdjson.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/fault_event_reader.h"

namespace faultline {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using Members = std::vector<std::pair<std::string_view, element>>;

// event_reader's View over a simdjson DOM element. The event object itself
// comes with its members listed once (`index`): the reader looks up about
// twenty keys, and a simdjson object lookup walks the whole object each time
// (it must, to find the last of a repeated key as nlohmann keeps it).
class SimdjsonView {
 public:
  explicit SimdjsonView(element e, const Members* index = nullptr) : e_(e), index_(index) {}

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
      return static_cast<std::int64_t>(e_.get_uint64().value_unsafe());
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
  // The last of a repeated key, as nlohmann's object keeps it.
  std::optional<SimdjsonView> find(std::string_view key) const {
    if (index_ != nullptr) {
      for (auto it = index_->rbegin(); it != index_->rend(); ++it) {
        // Length and first byte before the whole key: most of the event's
        // twenty-odd keys share their length with another one.
        if (it->first.size() == key.size() && (key.empty() || it->first[0] == key[0]) &&
            it->first == key) {
          return SimdjsonView(it->second);
        }
      }
      return std::nullopt;
    }
    std::optional<SimdjsonView> found;
    for (auto [k, v] : object()) {
      if (k == key) found.emplace(v);
    }
    return found;
  }
  // nlohmann's order: by key, the last of a repeated key. The usual map
  // (every value a string) is handed over in document order, where
  // assigning in turn also leaves the last of a repeat; only a map with a
  // value of another type is sorted, so that the error names the same key.
  template <class F>
  Status members(F f) const {
    bool all_strings = true;
    for (auto [k, v] : object()) all_strings = all_strings && v.type() == element_type::STRING;
    if (all_strings) {
      for (auto [k, v] : object()) FL_RETURN_IF_ERROR(f(k, SimdjsonView(v)));
      return OkStatus();
    }
    std::map<std::string_view, element> sorted;
    for (auto [k, v] : object()) sorted.insert_or_assign(k, v);
    for (const auto& [k, v] : sorted) FL_RETURN_IF_ERROR(f(k, SimdjsonView(v)));
    return OkStatus();
  }
  template <class F>
  Status elements(F f) const {
    const simdjson::dom::array array = e_.get_array().value_unsafe();  // see object()
    for (element v : array) FL_RETURN_IF_ERROR(f(SimdjsonView(v)));
    return OkStatus();
  }

 private:
  // A copy of the handle: iterating the temporary result itself would
  // dangle (range-for keeps only the reference value_unsafe() returns).
  simdjson::dom::object object() const { return e_.get_object().value_unsafe(); }

  element e_;
  const Members* index_;
};

}  // namespace

std::optional<Result<FaultEvent>> ParseFaultEventSimdjson(std::string_view json_text,
                                                          EventFields fields) {
  // Reused: its buffers grow to the largest event seen and stay.
  thread_local simdjson::dom::parser parser;
  thread_local Members index;
  element root;
  if (parser.parse(json_text.data(), json_text.size(), /*realloc_if_needed=*/true).get(root)) {
    return std::nullopt;  // nlohmann decides: its message, or a reading simdjson has not
  }
  index.clear();
  if (root.type() == element_type::OBJECT) {
    const simdjson::dom::object object = root.get_object().value_unsafe();
    for (auto [k, v] : object) index.emplace_back(k, v);
  }
  return event_reader::ReadFaultEvent(SimdjsonView(root, &index), fields);
}

}  // namespace faultline
