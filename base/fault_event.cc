// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event.h"

#include <algorithm>
#include <cstdio>

#include "base/json_text.h"
#include "base/time_format.h"

namespace faultline {
namespace {

// FNV-1a over the parts, each followed by a NUL so that ("ab","c") and
// ("a","bc") differ. Two seeds give 128 bits: ids are compared, never trusted
// for security, so a non-cryptographic hash is enough.
std::uint64_t Fnv1a(std::uint64_t seed, std::initializer_list<std::string_view> parts) {
  std::uint64_t h = seed;
  for (std::string_view part : parts) {
    for (unsigned char c : part) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    h ^= 0;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Status Missing(std::string_view key, std::string_view want) {
  return InvalidArgumentError("event key '" + std::string(key) + "' is missing or not " +
                              std::string(want));
}

// Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF) at the start of `text`, or 0.
std::size_t ValidUtf8Length(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// The message as it goes on the wire: every byte that is not valid UTF-8
// replaced by U+FFFD (as the JSON serializer would), then cut to `max_bytes`
// on a character boundary. Replacing first keeps the bound: each replaced
// byte grows to three, so cutting first could triple the message.
std::string WireMessage(std::string_view text, std::size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  // Most log lines are ASCII: nothing to replace, and any cut is on a
  // character boundary.
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return std::string(text.substr(0, max_bytes));
  }
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t n = ValidUtf8Length(text.substr(i));
    const std::string_view piece = n ? text.substr(i, n) : kReplacement;
    if (out.size() + piece.size() > max_bytes) break;
    out.append(piece);
    i += n ? n : 1;
  }
  return out;
}

}  // namespace

std::string MakeEventId(std::string_view node, std::string_view source, std::string_view cursor,
                        std::string_view rule) {
  const std::uint64_t a = Fnv1a(0xcbf29ce484222325ULL, {node, source, cursor, rule});
  const std::uint64_t b = Fnv1a(0x84222325cbf29ce4ULL, {rule, cursor, source, node});
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

std::string TruncateUtf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

nlohmann::json ToJson(const FaultEvent& e) {
  nlohmann::json j = {
      {"schema", FaultEvent::kSchemaVersion},
      {"id", e.id},
      {"node", e.node},
      {"boot_id", e.boot_id},
      {"source", e.source},
      {"origin", OriginName(e.origin)},
      {"rule", e.rule},
      {"pack", e.pack},
      {"category", e.category},
      {"severity", SeverityName(e.severity)},
      {"action", ActionName(e.action)},
      {"summary", e.summary},
      {"fields", e.fields},
      {"message", WireMessage(e.message, FaultEvent::kMaxMessageBytes)},
      {"log_time", FormatRfc3339(e.log_time)},
      {"detected_time", FormatRfc3339(e.detected_time)},
      {"labels", e.labels},
      {"suppressed", e.suppressed},
  };
  if (e.threshold) {
    j["threshold"] = {{"count", e.threshold->count},
                      {"window", FormatDuration(e.threshold->window)},
                      {"key", e.threshold->key}};
  }
  if (e.expire) j["expire"] = FormatDuration(*e.expire);
  if (!e.peer.empty()) j["peer"] = e.peer;
  if (!e.condition.empty()) j["condition"] = e.condition;
  return j;
}

namespace {

// The event's members in one place, each written by WriteMember; the two key
// orders below say which come when.
enum class Member {
  kAction,
  kBootId,
  kCategory,
  kCondition,
  kDetectedTime,
  kExpire,
  kFields,
  kId,
  kLabels,
  kLogTime,
  kMessage,
  kNode,
  kOrigin,
  kPack,
  kPeer,
  kRule,
  kSchema,
  kSeverity,
  kSource,
  kSummary,
  kSuppressed,
  kThreshold,
};

// nlohmann::json's objects are std::maps: ToJson(...).dump() lists the keys
// sorted, and that is the wire form the agent has always sent.
constexpr Member kSortedOrder[] = {
    Member::kAction,       Member::kBootId,    Member::kCategory, Member::kCondition,
    Member::kDetectedTime, Member::kExpire,    Member::kFields,   Member::kId,
    Member::kLabels,       Member::kLogTime,   Member::kMessage,  Member::kNode,
    Member::kOrigin,       Member::kPack,      Member::kPeer,     Member::kRule,
    Member::kSchema,       Member::kSeverity,  Member::kSource,   Member::kSummary,
    Member::kSuppressed,   Member::kThreshold,
};
// The schema's order (schema/faultline-event-v1.schema.json), then the
// optional keys added since, sorted: what `faultline scan` prints.
constexpr Member kSchemaOrder[] = {
    Member::kSchema,    Member::kId,         Member::kNode,      Member::kBootId,
    Member::kSource,    Member::kOrigin,     Member::kRule,      Member::kPack,
    Member::kCategory,  Member::kSeverity,   Member::kAction,    Member::kSummary,
    Member::kFields,    Member::kMessage,    Member::kLogTime,   Member::kDetectedTime,
    Member::kLabels,    Member::kSuppressed, Member::kThreshold, Member::kExpire,
    Member::kCondition, Member::kPeer,
};

void AppendKey(std::string& out, std::string_view key, bool& first) {
  if (!first) out.push_back(',');
  first = false;
  out.push_back('"');
  out.append(key);  // the schema's keys need no escaping
  out.append("\":");
}

void AppendStringMap(std::string& out, const std::map<std::string, std::string>& map) {
  out.push_back('{');
  bool first = true;
  for (const auto& [key, value] : map) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(out, key);
    out.push_back(':');
    AppendJsonString(out, value);
  }
  out.push_back('}');
}

// Writes the member `m` (key and value) if the event has it.
void WriteMember(std::string& out, const FaultEvent& e, Member m, bool& first) {
  const auto string_member = [&](std::string_view key, std::string_view value) {
    AppendKey(out, key, first);
    AppendJsonString(out, value);
  };
  switch (m) {
    case Member::kAction:
      return string_member("action", ActionName(e.action));
    case Member::kBootId:
      return string_member("boot_id", e.boot_id);
    case Member::kCategory:
      return string_member("category", e.category);
    case Member::kCondition:
      if (!e.condition.empty()) string_member("condition", e.condition);
      return;
    case Member::kDetectedTime:
      return string_member("detected_time", FormatRfc3339(e.detected_time));
    case Member::kExpire:
      if (e.expire) string_member("expire", FormatDuration(*e.expire));
      return;
    case Member::kFields:
      AppendKey(out, "fields", first);
      return AppendStringMap(out, e.fields);
    case Member::kId:
      return string_member("id", e.id);
    case Member::kLabels:
      AppendKey(out, "labels", first);
      return AppendStringMap(out, e.labels);
    case Member::kLogTime:
      return string_member("log_time", FormatRfc3339(e.log_time));
    case Member::kMessage:
      return string_member("message", WireMessage(e.message, FaultEvent::kMaxMessageBytes));
    case Member::kNode:
      return string_member("node", e.node);
    case Member::kOrigin:
      return string_member("origin", OriginName(e.origin));
    case Member::kPack:
      return string_member("pack", e.pack);
    case Member::kPeer:
      if (!e.peer.empty()) string_member("peer", e.peer);
      return;
    case Member::kRule:
      return string_member("rule", e.rule);
    case Member::kSchema:
      AppendKey(out, "schema", first);
      return AppendJsonNumber(out, std::int64_t{FaultEvent::kSchemaVersion});
    case Member::kSeverity:
      return string_member("severity", SeverityName(e.severity));
    case Member::kSource:
      return string_member("source", e.source);
    case Member::kSummary:
      return string_member("summary", e.summary);
    case Member::kSuppressed:
      AppendKey(out, "suppressed", first);
      return AppendJsonNumber(out, e.suppressed);
    case Member::kThreshold: {
      if (!e.threshold) return;
      AppendKey(out, "threshold", first);
      out.append("{\"count\":");
      AppendJsonNumber(out, std::int64_t{e.threshold->count});
      out.append(",\"key\":[");
      for (std::size_t i = 0; i < e.threshold->key.size(); ++i) {
        if (i > 0) out.push_back(',');
        AppendJsonString(out, e.threshold->key[i]);
      }
      out.append("],\"window\":");
      AppendJsonString(out, FormatDuration(e.threshold->window));
      out.push_back('}');
      return;
    }
  }
}

}  // namespace

void AppendFaultEventMembers(std::string& out, const FaultEvent& event, EventKeyOrder order,
                             bool first) {
  if (order == EventKeyOrder::kSorted) {
    for (Member m : kSortedOrder) WriteMember(out, event, m, first);
  } else {
    for (Member m : kSchemaOrder) WriteMember(out, event, m, first);
  }
}

std::string SerializeFaultEvent(const FaultEvent& event) {
  std::string out;
  out.reserve(512 + event.message.size() + event.summary.size());
  out.push_back('{');
  AppendFaultEventMembers(out, event, EventKeyOrder::kSorted, /*first=*/true);
  out.push_back('}');
  return out;
}

Result<FaultEvent> FaultEventFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgumentError("event is not a JSON object");
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_number_integer()) return Missing("schema", "an integer");
  // Read as 64 bits: get<int>() would wrap 4294967297 to 1 and accept an
  // event of an unknown future schema as ours.
  const std::int64_t schema_version = schema->get<std::int64_t>();
  if (schema_version < 1 || schema_version > FaultEvent::kSchemaVersion) {
    return FailedPreconditionError("event schema " + schema->dump() +
                                   " is not understood (this build reads 1.." +
                                   std::to_string(FaultEvent::kSchemaVersion) + ")");
  }
  FaultEvent e;
  auto get_string = [&](const char* key, std::string* out, bool required) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      return required ? Missing(key, "a string") : OkStatus();
    }
    if (!it->is_string()) return Missing(key, "a string");
    *out = it->get<std::string>();
    return OkStatus();
  };
  auto get_time = [&](const char* key, std::chrono::system_clock::time_point* out) -> Status {
    std::string text;
    FL_RETURN_IF_ERROR(get_string(key, &text, true));
    auto t = ParseRfc3339(text);
    if (!t) return InvalidArgumentError(std::string("event key '") + key + "' is not RFC 3339");
    // At the schema's precision (FormatRfc3339 writes microseconds): an
    // event read is the event written back, whatever digits it came with.
    *out = std::chrono::floor<std::chrono::microseconds>(*t);
    return OkStatus();
  };
  auto get_map = [&](const char* key, std::map<std::string, std::string>* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return OkStatus();
    if (!it->is_object()) return Missing(key, "an object");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) return Missing(std::string(key) + "." + k, "a string");
      (*out)[k] = v.get<std::string>();
    }
    return OkStatus();
  };

  FL_RETURN_IF_ERROR(get_string("id", &e.id, true));
  FL_RETURN_IF_ERROR(get_string("node", &e.node, true));
  FL_RETURN_IF_ERROR(get_string("boot_id", &e.boot_id, false));
  FL_RETURN_IF_ERROR(get_string("source", &e.source, true));
  FL_RETURN_IF_ERROR(get_string("rule", &e.rule, true));
  FL_RETURN_IF_ERROR(get_string("pack", &e.pack, false));
  FL_RETURN_IF_ERROR(get_string("category", &e.category, false));
  FL_RETURN_IF_ERROR(get_string("summary", &e.summary, false));
  FL_RETURN_IF_ERROR(get_string("message", &e.message, false));
  if (e.id.empty()) return InvalidArgumentError("event key 'id' is empty");
  if (e.node.empty()) return InvalidArgumentError("event key 'node' is empty");
  if (e.rule.empty()) return InvalidArgumentError("event key 'rule' is empty");

  std::string name;
  FL_RETURN_IF_ERROR(get_string("origin", &name, false));
  if (!name.empty()) {
    auto origin = ParseOrigin(name);
    if (!origin) return InvalidArgumentError("event key 'origin' has unknown value '" + name + "'");
    e.origin = *origin;
  }
  name.clear();
  FL_RETURN_IF_ERROR(get_string("severity", &name, true));
  auto severity = ParseSeverity(name);
  if (!severity) {
    return InvalidArgumentError("event key 'severity' has unknown value '" + name + "'");
  }
  e.severity = *severity;
  name.clear();
  FL_RETURN_IF_ERROR(get_string("action", &name, true));
  auto action = ParseAction(name);
  if (!action) return InvalidArgumentError("event key 'action' has unknown value '" + name + "'");
  e.action = *action;

  FL_RETURN_IF_ERROR(get_time("log_time", &e.log_time));
  FL_RETURN_IF_ERROR(get_time("detected_time", &e.detected_time));
  FL_RETURN_IF_ERROR(get_map("fields", &e.fields));
  FL_RETURN_IF_ERROR(get_map("labels", &e.labels));

  if (auto it = j.find("suppressed"); it != j.end() && !it->is_null()) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
      return Missing("suppressed", "a non-negative integer");
    }
    e.suppressed = it->get<std::uint64_t>();
  }
  if (auto it = j.find("threshold"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Missing("threshold", "an object");
    EventThreshold t;
    auto count = it->find("count");
    if (count == it->end() || !count->is_number_integer() || count->get<int>() < 1) {
      return Missing("threshold.count", "a positive integer");
    }
    t.count = count->get<int>();
    auto window = it->find("window");
    if (window == it->end() || !window->is_string()) {
      return Missing("threshold.window", "a duration");
    }
    auto d = ParseDuration(window->get<std::string>());
    if (!d) return InvalidArgumentError("event key 'threshold.window' is not a duration");
    t.window = std::chrono::duration_cast<std::chrono::seconds>(*d);
    if (auto key = it->find("key"); key != it->end() && !key->is_null()) {
      if (!key->is_array()) return Missing("threshold.key", "a list of strings");
      for (const auto& k : *key) {
        if (!k.is_string()) return Missing("threshold.key", "a list of strings");
        t.key.push_back(k.get<std::string>());
      }
    }
    e.threshold = std::move(t);
  }
  if (auto it = j.find("expire"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Missing("expire", "a duration");
    auto d = ParseDuration(it->get<std::string>());
    if (!d) return InvalidArgumentError("event key 'expire' is not a duration");
    e.expire = std::chrono::duration_cast<std::chrono::seconds>(*d);
  }
  if (auto it = j.find("peer"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Missing("peer", "a string");
    e.peer = TruncateUtf8(it->get<std::string>(), FaultEvent::kMaxFieldBytes);
  }
  if (auto it = j.find("condition"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Missing("condition", "a string");
    e.condition = it->get<std::string>();
  }
  return e;
}

Result<FaultEvent> ParseFaultEvent(std::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("event is not valid JSON");
  try {
    return FaultEventFromJson(j);
  } catch (const nlohmann::json::exception& e) {
    // A number out of range for get<int>() and the like.
    return InvalidArgumentError(std::string("event is malformed: ") + e.what());
  }
}

}  // namespace faultline
