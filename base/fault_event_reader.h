// SPDX-License-Identifier: Apache-2.0
#pragma once

// The event's validation, written once over a read-only view of a parsed JSON
// document, so that both parsers that feed it (simdjson's DOM on the
// tainter's hot path, nlohmann::json for everything simdjson refuses and for
// FaultEventFromJson) accept the same events and refuse the others with the
// same status and message. Internal to base/: callers use ParseFaultEvent.
//
// A View is a small copyable handle with:
//   bool is_object(), is_array(), is_null(), is_string(), is_integer(), is_unsigned()
//   std::int64_t as_int64()     (an unsigned above INT64_MAX wraps, as nlohmann's get<int64_t>)
//   std::uint64_t as_uint64()
//   std::string_view as_string()
//   std::optional<View> find(std::string_view key)   (a repeated key: the last one, as nlohmann)
//   std::optional<View> find(EventKey key)            the same for one of the event object's keys
//   std::string dump()                                (an integer's decimal text)
//   Status members(F)   calls F(std::string_view key, View) in key order, each key once
//                       (the last of repeats), stopping at the first error
//   Status elements(F)  calls F(View) per array element, stopping at the first error

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/fault_event.h"
#include "base/reused_lines.h"
#include "base/status.h"
#include "base/time_format.h"
#include "base/vocabulary.h"

namespace faultline::event_reader {

// The event object's keys the reader asks for, each named with its index in
// this list (Key("id")), so that a view can find them without comparing
// names: simdjson's keeps the event's members in slots by this index, filled
// in one walk of the object (base/fault_event_simdjson.cc); finding a key by
// its name cost about 90 instructions, some 25 per event.
inline constexpr std::array<std::string_view, 26> kEventKeys = {
    "schema",        "id",      "node",      "boot_id",    "source",    "rule",   "pack",
    "category",      "summary", "message",   "origin",     "severity",  "action", "log_time",
    "detected_time", "fields",  "labels",    "suppressed", "threshold", "expire", "peer",
    "condition",     "recover", "probation", "clears",     "evidence"};

struct EventKey {
  std::string_view name;
  std::size_t index;  // in kEventKeys
};

consteval EventKey Key(std::string_view name) {
  for (std::size_t i = 0; i < kEventKeys.size(); ++i) {
    if (kEventKeys[i] == name) return {name, i};
  }
  throw "not one of kEventKeys";  // a compile error
}

inline Status Missing(std::string_view key, std::string_view want) {
  return InvalidArgumentError("event key '" + std::string(key) + "' is missing or not " +
                              std::string(want));
}

template <class View>
Status GetString(const View& j, EventKey key, std::string* out, bool required) {
  std::optional<View> it = j.find(key);
  if (!it || it->is_null()) return required ? Missing(key.name, "a string") : OkStatus();
  if (!it->is_string()) return Missing(key.name, "a string");
  out->assign(it->as_string());
  return OkStatus();
}

template <class View>
Status GetTime(const View& j, EventKey key, std::chrono::system_clock::time_point* out) {
  std::optional<View> it = j.find(key);
  if (!it || it->is_null() || !it->is_string()) return Missing(key.name, "a string");
  auto t = ParseRfc3339(it->as_string());
  if (!t) {
    return InvalidArgumentError("event key '" + std::string(key.name) + "' is not RFC 3339");
  }
  // At the schema's precision (FormatRfc3339 writes microseconds): an
  // event read is the event written back, whatever digits it came with.
  *out = std::chrono::floor<std::chrono::microseconds>(*t);
  return OkStatus();
}

// `out` null: checked only. `out` is filled in place: a map that already
// holds the same keys in the same order (the last event a reader of many
// read, as the agent writes the keys sorted) keeps its nodes and their
// strings' buffers, and only the values are copied.
template <class View>
Status GetMap(const View& j, EventKey key, std::map<std::string, std::string>* out) {
  std::optional<View> it = j.find(key);
  if (!it || it->is_null()) {
    if (out != nullptr) out->clear();
    return OkStatus();
  }
  if (!it->is_object()) return Missing(key.name, "an object");
  // [out->begin(), reuse) is the map of the members read so far; the nodes
  // from `reuse` on are the last event's, each key above every key before
  // it (the map is sorted), so a member with that key takes that node.
  auto reuse = out != nullptr ? out->begin() : std::map<std::string, std::string>::iterator();
  Status status = it->members([&](std::string_view k, const View& v) -> Status {
    if (!v.is_string()) return Missing(std::string(key.name) + "." + std::string(k), "a string");
    if (out == nullptr) return OkStatus();
    if (reuse != out->end()) {
      if (std::string_view(reuse->first) == k) {
        (reuse++)->second.assign(v.as_string());
        return OkStatus();
      }
      reuse = out->erase(reuse, out->end());  // another key: the general path from here
    }
    // The agent writes the keys in order: append at the end without a
    // search. A key out of order, or repeated (the last one wins), takes
    // the general path.
    // (As two string_views: clang 14 cannot compare a std::string with one.)
    if (out->empty() || std::string_view(out->rbegin()->first) < k) {
      out->emplace_hint(out->end(), std::piecewise_construct, std::forward_as_tuple(k),
                        std::forward_as_tuple(v.as_string()));
    } else {
      (*out)[std::string(k)] = std::string(v.as_string());
    }
    return OkStatus();
  });
  if (out != nullptr && status.ok()) out->erase(reuse, out->end());
  return status;
}

// Every member of `e` back to its default, the strings' and lists' buffers
// kept for the next event read into it (ReadFaultEventInto); `fields` and
// `labels` are refilled in place by GetMap.
inline void ClearKeepingBuffers(FaultEvent& e) {
  // A new member of FaultEvent must be cleared here (else an event read in
  // place would keep the last one's): this size says one was added.
#ifdef __GLIBCXX__  // libstdc++'s sizes
  static_assert(sizeof(FaultEvent) == 648 || sizeof(void*) != 8,
                "FaultEvent changed: clear its new member here, then update the size");
#endif
  for (std::string* s : {&e.id, &e.node, &e.boot_id, &e.source, &e.rule, &e.pack, &e.category,
                         &e.summary, &e.message, &e.peer, &e.condition, &e.recover}) {
    s->clear();
  }
  e.origin = Origin::kAny;
  e.severity = Severity::kWarning;
  e.action = Action::kEvent;
  e.log_time = {};
  e.detected_time = {};
  e.suppressed = 0;
  e.threshold.reset();
  e.expire.reset();
  e.probation.reset();
  e.clears.clear();
  KeepLines(e.evidence, 0);
}

// Reads the event into `e`, reusing its buffers (ClearKeepingBuffers); on an
// error `e` holds part of the event.
template <class View>
Status ReadFaultEventInto(const View& j, FaultEvent& e, EventFields fields = EventFields::kKeep) {
  if (!j.is_object()) return InvalidArgumentError("event is not a JSON object");
  std::optional<View> schema = j.find(Key("schema"));
  if (!schema || !schema->is_integer()) return Missing("schema", "an integer");
  // Read as 64 bits: an int would wrap 4294967297 to 1 and accept an event
  // of an unknown future schema as ours.
  const std::int64_t schema_version = schema->as_int64();
  if (schema_version < 1 || schema_version > FaultEvent::kSchemaVersion) {
    return FailedPreconditionError("event schema " + schema->dump() +
                                   " is not understood (this build reads 1.." +
                                   std::to_string(FaultEvent::kSchemaVersion) + ")");
  }
  ClearKeepingBuffers(e);
  FL_RETURN_IF_ERROR(GetString(j, Key("id"), &e.id, true));
  FL_RETURN_IF_ERROR(GetString(j, Key("node"), &e.node, true));
  FL_RETURN_IF_ERROR(GetString(j, Key("boot_id"), &e.boot_id, false));
  FL_RETURN_IF_ERROR(GetString(j, Key("source"), &e.source, true));
  FL_RETURN_IF_ERROR(GetString(j, Key("rule"), &e.rule, true));
  FL_RETURN_IF_ERROR(GetString(j, Key("pack"), &e.pack, false));
  FL_RETURN_IF_ERROR(GetString(j, Key("category"), &e.category, false));
  FL_RETURN_IF_ERROR(GetString(j, Key("summary"), &e.summary, false));
  FL_RETURN_IF_ERROR(GetString(j, Key("message"), &e.message, false));
  if (e.id.empty()) return InvalidArgumentError("event key 'id' is empty");
  if (e.node.empty()) return InvalidArgumentError("event key 'node' is empty");
  if (e.rule.empty()) return InvalidArgumentError("event key 'rule' is empty");

  std::string name;
  FL_RETURN_IF_ERROR(GetString(j, Key("origin"), &name, false));
  if (!name.empty()) {
    auto origin = ParseOrigin(name);
    if (!origin) return InvalidArgumentError("event key 'origin' has unknown value '" + name + "'");
    e.origin = *origin;
  }
  name.clear();
  FL_RETURN_IF_ERROR(GetString(j, Key("severity"), &name, true));
  auto severity = ParseSeverity(name);
  if (!severity) {
    return InvalidArgumentError("event key 'severity' has unknown value '" + name + "'");
  }
  e.severity = *severity;
  name.clear();
  FL_RETURN_IF_ERROR(GetString(j, Key("action"), &name, true));
  auto action = ParseAction(name);
  if (!action) return InvalidArgumentError("event key 'action' has unknown value '" + name + "'");
  e.action = *action;

  FL_RETURN_IF_ERROR(GetTime(j, Key("log_time"), &e.log_time));
  FL_RETURN_IF_ERROR(GetTime(j, Key("detected_time"), &e.detected_time));
  if (fields == EventFields::kCheckOnly) e.fields.clear();
  FL_RETURN_IF_ERROR(GetMap(j, Key("fields"), fields == EventFields::kKeep ? &e.fields : nullptr));
  FL_RETURN_IF_ERROR(GetMap(j, Key("labels"), &e.labels));

  if (std::optional<View> it = j.find(Key("suppressed")); it && !it->is_null()) {
    if (!it->is_integer() || (!it->is_unsigned() && it->as_int64() < 0)) {
      return Missing("suppressed", "a non-negative integer");
    }
    e.suppressed = it->as_uint64();
  }
  if (std::optional<View> it = j.find(Key("threshold")); it && !it->is_null()) {
    if (!it->is_object()) return Missing("threshold", "an object");
    EventThreshold t;
    // An int, as before: the low 32 bits of a larger integer (nlohmann's get<int>()).
    std::optional<View> count = it->find("count");
    if (!count || !count->is_integer() || static_cast<int>(count->as_int64()) < 1) {
      return Missing("threshold.count", "a positive integer");
    }
    t.count = static_cast<int>(count->as_int64());
    std::optional<View> window = it->find("window");
    if (!window || !window->is_string()) return Missing("threshold.window", "a duration");
    auto d = ParseDuration(window->as_string());
    if (!d) return InvalidArgumentError("event key 'threshold.window' is not a duration");
    t.window = std::chrono::duration_cast<std::chrono::seconds>(*d);
    if (std::optional<View> key = it->find("key"); key && !key->is_null()) {
      if (!key->is_array()) return Missing("threshold.key", "a list of strings");
      FL_RETURN_IF_ERROR(key->elements([&](const View& k) -> Status {
        if (!k.is_string()) return Missing("threshold.key", "a list of strings");
        t.key.emplace_back(k.as_string());
        return OkStatus();
      }));
    }
    e.threshold = std::move(t);
  }
  if (std::optional<View> it = j.find(Key("expire")); it && !it->is_null()) {
    if (!it->is_string()) return Missing("expire", "a duration");
    auto d = ParseDuration(it->as_string());
    if (!d) return InvalidArgumentError("event key 'expire' is not a duration");
    e.expire = std::chrono::duration_cast<std::chrono::seconds>(*d);
  }
  if (std::optional<View> it = j.find(Key("peer")); it && !it->is_null()) {
    if (!it->is_string()) return Missing("peer", "a string");
    e.peer = TruncateUtf8(it->as_string(), FaultEvent::kMaxFieldBytes);
  }
  if (std::optional<View> it = j.find(Key("condition")); it && !it->is_null()) {
    if (!it->is_string()) return Missing("condition", "a string");
    e.condition = std::string(it->as_string());
  }
  if (std::optional<View> it = j.find(Key("recover")); it && !it->is_null()) {
    if (!it->is_string()) return Missing("recover", "a string");
    e.recover = std::string(it->as_string());
  }
  if (std::optional<View> it = j.find(Key("probation")); it && !it->is_null()) {
    if (!it->is_string()) return Missing("probation", "a duration");
    auto d = ParseDuration(it->as_string());
    if (!d) return InvalidArgumentError("event key 'probation' is not a duration");
    e.probation = std::chrono::duration_cast<std::chrono::seconds>(*d);
  }
  if (std::optional<View> it = j.find(Key("clears")); it && !it->is_null()) {
    if (!it->is_array()) return Missing("clears", "a list of rule ids");
    FL_RETURN_IF_ERROR(it->elements([&](const View& r) -> Status {
      if (!r.is_string()) return Missing("clears", "a list of rule ids");
      if (e.clears.size() < 16) e.clears.push_back(TruncateUtf8(r.as_string(), 128));
      return OkStatus();
    }));
  }
  if (std::optional<View> it = j.find(Key("evidence")); it && !it->is_null()) {
    if (!it->is_array()) return Missing("evidence", "a list of log lines");
    FL_RETURN_IF_ERROR(it->elements([&](const View& line) -> Status {
      if (!line.is_string()) return Missing("evidence", "a list of log lines");
      if (fields == EventFields::kKeep) AddLine(e.evidence, line.as_string());
      return OkStatus();
    }));
    // Another writer's event is held to the agent's bounds all the same.
    e.evidence = BoundEvidence(std::move(e.evidence));
  }
  return OkStatus();
}

template <class View>
Result<FaultEvent> ReadFaultEvent(const View& j, EventFields fields = EventFields::kKeep) {
  FaultEvent e;
  FL_RETURN_IF_ERROR(ReadFaultEventInto(j, e, fields));
  return e;
}

}  // namespace faultline::event_reader
