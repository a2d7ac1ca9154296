// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event_simdjson.h"

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/fault_event_reader.h"

namespace faultline {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// The event object's keys that event_reader asks for
// (event_reader::kEventKeys). Each has a slot, its index there, reached by a
// hash of the key's length and first and last bytes (no two of these
// collide: checked below) and then compared whole: the reader looks up about
// twenty keys, and a simdjson object lookup walks the whole object each time
// (it must, to find the last of a repeated key as nlohmann keeps it). A key
// not listed here is found by that walk.
using event_reader::kEventKeys;
constexpr std::size_t kHashSize = 64;
constexpr std::size_t KeyHash(std::string_view k) {
  return (k.size() * 2 + std::size_t{static_cast<unsigned char>(k.front())} * 13 +
          static_cast<unsigned char>(k.back())) %
         kHashSize;
}
constexpr std::uint8_t kNoSlot = kEventKeys.size();  // past the last key's slot
constexpr std::array<std::uint8_t, kHashSize> kSlotOfHash = [] {
  std::array<std::uint8_t, kHashSize> t{};
  t.fill(kNoSlot);
  for (std::size_t i = 0; i < kEventKeys.size(); ++i) {
    t[KeyHash(kEventKeys[i])] = static_cast<std::uint8_t>(i);
  }
  return t;
}();
constexpr bool EveryKeyHasItsOwnSlot() {
  for (std::size_t i = 0; i < kEventKeys.size(); ++i) {
    if (kSlotOfHash[KeyHash(kEventKeys[i])] != i) return false;
  }
  return true;
}
static_assert(EveryKeyHasItsOwnSlot(), "two event keys share a hash: change KeyHash");

// The slot of `key`, or kNoSlot for a key the reader does not know.
std::size_t SlotOf(std::string_view key) {
  if (key.empty()) return kNoSlot;
  const std::uint8_t slot = kSlotOfHash[KeyHash(key)];
  return slot != kNoSlot && kEventKeys[slot] == key ? slot : kNoSlot;
}

// The event object's members in their slots: the last of a repeated key,
// as nlohmann keeps it (they are filled in document order). Two arrays, not
// one of optionals: clearing 26 flags per event is cheaper than 26 optionals.
struct Slots {
  std::array<element, kEventKeys.size()> value;
  std::array<bool, kEventKeys.size()> present{};
};

// event_reader's View over a simdjson DOM element. The event object itself
// comes with its members in their slots.
class SimdjsonView {
 public:
  explicit SimdjsonView(element e, const Slots* slots = nullptr) : e_(e), slots_(slots) {}

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
  // The event object's member in its slot; the walk below elsewhere.
  std::optional<SimdjsonView> find(event_reader::EventKey key) const {
    if (slots_ == nullptr) return find(key.name);
    if (!slots_->present[key.index]) return std::nullopt;
    return SimdjsonView(slots_->value[key.index]);
  }
  // The last of a repeated key, as nlohmann's object keeps it.
  std::optional<SimdjsonView> find(std::string_view key) const {
    if (slots_ != nullptr) {
      if (const std::size_t slot = SlotOf(key); slot != kNoSlot) {
        if (!slots_->present[slot]) return std::nullopt;
        return SimdjsonView(slots_->value[slot]);
      }
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
  const Slots* slots_;
};

}  // namespace

std::optional<Status> ParseFaultEventSimdjson(std::string_view json_text, FaultEvent& event,
                                              EventFields fields) {
  // Reused: its buffers grow to the largest event seen and stay.
  thread_local simdjson::dom::parser parser;
  thread_local Slots slots;
  element root;
  if (parser.parse(json_text.data(), json_text.size(), /*realloc_if_needed=*/true).get(root)) {
    return std::nullopt;  // nlohmann decides: its message, or a reading simdjson has not
  }
  slots.present.fill(false);
  if (root.type() == element_type::OBJECT) {
    const simdjson::dom::object object = root.get_object().value_unsafe();
    for (auto [k, v] : object) {
      if (const std::size_t slot = SlotOf(k); slot != kNoSlot) {
        slots.value[slot] = v;
        slots.present[slot] = true;
      }
    }
  }
  return event_reader::ReadFaultEventInto(SimdjsonView(root, &slots), event, fields);
}

}  // namespace faultline
