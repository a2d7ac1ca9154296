// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event.h"

#include <algorithm>
#include <cstdio>

#include "base/fault_event_reader.h"
#include "base/fault_event_simdjson.h"
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
  if (!e.recover.empty()) j["recover"] = e.recover;
  if (e.probation) j["probation"] = FormatDuration(*e.probation);
  if (!e.clears.empty()) j["clears"] = e.clears;
  return j;
}

std::string SerializeFaultEvent(const FaultEvent& event) {
  return ToJson(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// event_reader's View over nlohmann::json (base/fault_event_reader.h).
class NlohmannView {
 public:
  explicit NlohmannView(const nlohmann::json& j) : j_(&j) {}

  bool is_object() const { return j_->is_object(); }
  bool is_array() const { return j_->is_array(); }
  bool is_null() const { return j_->is_null(); }
  bool is_string() const { return j_->is_string(); }
  bool is_integer() const { return j_->is_number_integer(); }
  bool is_unsigned() const { return j_->is_number_unsigned(); }
  std::int64_t as_int64() const { return j_->get<std::int64_t>(); }
  std::uint64_t as_uint64() const { return j_->get<std::uint64_t>(); }
  std::string_view as_string() const { return j_->get_ref<const std::string&>(); }
  std::string dump() const { return j_->dump(); }
  std::optional<NlohmannView> find(std::string_view key) const {
    auto it = j_->find(key);
    if (it == j_->end()) return std::nullopt;
    return NlohmannView(*it);
  }
  template <class F>
  Status members(F f) const {
    for (const auto& [k, v] : j_->items()) FL_RETURN_IF_ERROR(f(k, NlohmannView(v)));
    return OkStatus();
  }
  template <class F>
  Status elements(F f) const {
    for (const auto& v : *j_) FL_RETURN_IF_ERROR(f(NlohmannView(v)));
    return OkStatus();
  }

 private:
  const nlohmann::json* j_;
};

}  // namespace

Result<FaultEvent> FaultEventFromJson(const nlohmann::json& j) {
  return event_reader::ReadFaultEvent(NlohmannView(j));
}

Result<FaultEvent> ParseFaultEvent(std::string_view json_text) {
  // The fast path reads nearly every event; what simdjson does not take
  // (not JSON, or JSON it reads differently) nlohmann reads, as it always did.
  if (std::optional<Result<FaultEvent>> fast = ParseFaultEventSimdjson(json_text)) {
    return std::move(*fast);
  }
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
