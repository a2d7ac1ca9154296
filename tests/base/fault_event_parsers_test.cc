// SPDX-License-Identifier: Apache-2.0
// ParseFaultEvent reads with simdjson and falls back to nlohmann for what
// simdjson does not take. Both must give every input the same answer: the
// same event, or the same status code and message. Here, over a real event
// and every mutation of it that the validation distinguishes (each key
// removed, each value replaced by each JSON type and the integers at the
// edges of 32 and 64 bits, repeated keys), against nlohmann's own reading.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/fault_event_simdjson.h"

namespace faultline {
namespace {

const char kEvent[] =
    R"({"schema":1,"id":"aa00aa00aa00aa00aa00aa00aa00aa00","node":"gpu-3","boot_id":"b",)"
    R"("source":"ibcounters","origin":"ibcounters","rule":"ib.link_flap","pack":"ib",)"
    R"("category":"network","severity":"error","action":"taint","summary":"IB link down",)"
    R"("fields":{"device":"mlx5_0","port":"1"},"message":"mlx5_0/1 link_downed 3 -> 4 \u00e9",)"
    R"("log_time":"2026-11-22T07:02:53Z","detected_time":"2026-11-22T07:02:54.1234567Z",)"
    R"("labels":{"a":"1"},"suppressed":12,)"
    R"("threshold":{"count":5,"window":"24h","key":["device","port"]},"expire":"1h",)"
    R"("peer":"10.0.4.12","condition":"NetworkFault",)"
    R"("evidence":["mlx5_core 0000:3b:00.0: Port module event: module 0, Cable unplugged","x"]})";

std::string Describe(const Result<FaultEvent>& r) {
  if (!r) return std::string(StatusCodeName(r.error().code())) + ": " + r.error().message();
  return SerializeFaultEvent(*r) + " message=" + r->message;
}

// What nlohmann alone makes of `text` (ParseFaultEvent's answer before simdjson).
std::string ByNlohmann(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "invalid_argument: event is not valid JSON";
  try {
    return Describe(FaultEventFromJson(j));
  } catch (const nlohmann::json::exception& e) {
    return std::string("invalid_argument: event is malformed: ") + e.what();
  }
}

// `base` with `key`'s value replaced by `value`, and `base` with `key`
// again at its end (written as given: a repeated key, or a map's repeated
// and unordered keys, stay in the text; both readers keep the last one).
void AddWith(std::vector<std::string>& out, const nlohmann::json& base, const std::string& key,
             const std::string& value) {
  nlohmann::json with = base;
  with[key] = nlohmann::json::parse(value);
  out.push_back(with.dump());
  std::string text = base.dump();
  text.pop_back();
  text.append(",\"").append(key).append("\":").append(value).append("}");
  out.push_back(std::move(text));
}

std::vector<std::string> Mutations() {
  const nlohmann::json base = nlohmann::json::parse(kEvent);
  const std::vector<std::string> values = {"null",
                                           "true",
                                           "0",
                                           "-0",
                                           "1",
                                           "-1",
                                           "1.0",
                                           "1e0",
                                           "2",
                                           "4294967297",
                                           "-4294967295",
                                           "9223372036854775807",
                                           "9223372036854775808",
                                           "18446744073709551615",
                                           "\"\"",
                                           "\"x\"",
                                           "\"critical\"",
                                           "\"kernel\"",
                                           "\"1h\"",
                                           "\"2026-11-22T07:02:53Z\"",
                                           "[]",
                                           "[\"a\"]",
                                           "[1]",
                                           "{}",
                                           R"({"k":"v"})",
                                           R"({"k":1})",
                                           R"({"count":2,"window":"1m"})",
                                           R"({"count":0,"window":"1m"})",
                                           R"({"count":4294967297,"window":"1m"})",
                                           R"({"count":2,"window":"1m","key":null})",
                                           R"({"count":2,"window":"soon"})",
                                           R"({"b":"1","a":2,"c":[]})"};
  std::vector<std::string> out = {kEvent,
                                  "",
                                  " ",
                                  "not json",
                                  "[1,2]",
                                  "1",
                                  "\"s\"",
                                  "{}",
                                  std::string(kEvent) + " ",
                                  std::string(kEvent) + "x"};
  for (const auto& [key, value] : base.items()) {
    nlohmann::json without = base;
    without.erase(key);
    out.push_back(without.dump());
    for (const std::string& v : values) AddWith(out, base, key, v);
  }
  // Raw control bytes (JSON allows only blanks, and only between tokens),
  // at every 7th offset of the event: inside strings, keys, numbers, between tokens.
  const std::string event = kEvent;
  for (std::size_t at = 0; at <= event.size(); at += 7) {
    for (char c : {'\0', '\x01', '\x1f', '\t', '\n', '\r', '\x7f'}) {
      out.push_back(event.substr(0, at) + c + event.substr(at));
    }
  }
  // Integers nlohmann reads as doubles, which simdjson refuses: the fallback.
  for (const char* big : {"18446744073709551616", "-9223372036854775809"}) {
    std::string text = base.dump();
    text.pop_back();
    text.append(",\"suppressed\":").append(big).append("}");
    out.push_back(std::move(text));
  }
  return out;
}

TEST_CASE("ParseFaultEvent (simdjson first) answers every input as nlohmann alone does") {
  int fast = 0;
  for (const std::string& text : Mutations()) {
    CAPTURE(text);
    CHECK(Describe(ParseFaultEvent(text)) == ByNlohmann(text));
    FaultEvent event;
    if (ParseFaultEventSimdjson(text, event)) ++fast;
  }
  // Nearly all of them went through simdjson (not only the fallback).
  CHECK(fast > 1000);
}

TEST_CASE(
    "ParseFaultEvent with EventFields::kCheckOnly answers every input alike, fields and "
    "evidence left out") {
  // The correlation consumer reads with kCheckOnly: it must refuse exactly
  // the events the deciding consumer refuses (same message), and read the
  // others the same but for the captures and the evidence lines.
  int without = 0;
  int without_evidence = 0;
  for (const std::string& text : Mutations()) {
    CAPTURE(text);
    Result<FaultEvent> whole = ParseFaultEvent(text);
    Result<FaultEvent> checked = ParseFaultEvent(text, EventFields::kCheckOnly);
    REQUIRE(whole.ok() == checked.ok());
    if (!whole) {
      CHECK(Describe(checked) == Describe(whole));
      continue;
    }
    CHECK(checked->fields.empty());
    CHECK(checked->evidence.empty());
    if (!whole->fields.empty()) ++without;
    if (!whole->evidence.empty()) ++without_evidence;
    whole->fields.clear();
    whole->evidence.clear();
    CHECK(Describe(checked) == Describe(whole));
  }
  CHECK(without > 200);           // events read with captures (294 of the mutations)
  CHECK(without_evidence > 200);  // and with evidence lines
}

// Events whose captures, labels and evidence differ from kEvent's in count,
// keys and order, for ParseFaultEventInto's reused maps and lines.
std::vector<std::string> Neighbours() {
  const nlohmann::json base = nlohmann::json::parse(kEvent);
  std::vector<std::string> out;
  // A value longer than a short string's buffer.
  const std::string kLongValue =
      std::string(R"({"device":"mlx5_0","port":"1","zz":")") + std::string(80, 'v') + R"("})";
  const std::vector<std::string> maps = {R"({})",
                                         R"({"device":"mlx5_0"})",
                                         R"({"device":"mlx5_1","port":"2","lane":"3"})",
                                         R"({"a":"1","device":"mlx5_0","port":"1"})",
                                         R"({"port":"1","device":"mlx5_0"})",
                                         R"({"device":"x","device":"y","port":"1"})",
                                         kLongValue};
  for (const char* key : {"fields", "labels"}) {
    for (const std::string& m : maps) AddWith(out, base, key, m);
  }
  // From no evidence to more lines than an event keeps, longer and shorter.
  for (std::size_t n : {0, 1, 3, 8, 9, 12}) {
    nlohmann::json with = base;
    with["evidence"] = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
      with["evidence"].push_back("line " + std::to_string(i) + std::string(60 * (i % 4), 'x'));
    }
    out.push_back(with.dump());
  }
  nlohmann::json bare = base;  // only the required keys
  for (const char* key : {"boot_id", "pack", "category", "summary", "message", "fields", "labels",
                          "suppressed", "threshold", "expire", "peer", "condition", "evidence"}) {
    bare.erase(key);
  }
  out.push_back(bare.dump());
  nlohmann::json extra = base;  // the optional keys kEvent leaves out
  extra["recover"] = "reboot";
  extra["probation"] = "10m";
  extra["clears"] = {"ib.link_flap", "nvidia.xid"};
  out.push_back(extra.dump());
  return out;
}

TEST_CASE("ParseFaultEventInto into one event, again and again, answers as ParseFaultEvent") {
  // The tainter's consumers read every message into one FaultEvent each,
  // its buffers reused: whatever came before, each event must be the one
  // a fresh parse gives (nothing of the last one kept), and the same error.
  std::vector<std::string> texts = Mutations();
  const std::vector<std::string> neighbours = Neighbours();
  texts.insert(texts.end(), neighbours.begin(), neighbours.end());
  // Each text after each neighbour, and the neighbours in both orders.
  std::vector<std::string> order;
  for (const std::string& text : texts) {
    order.push_back(neighbours[order.size() % neighbours.size()]);
    order.push_back(text);
  }
  order.insert(order.end(), neighbours.rbegin(), neighbours.rend());
  order.insert(order.end(), neighbours.begin(), neighbours.end());
  for (EventFields fields : {EventFields::kKeep, EventFields::kCheckOnly}) {
    FaultEvent event;
    FaultEvent other;  // read with the other EventFields in between
    int read = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::string& text = order[i];
      CAPTURE(text);
      const Result<FaultEvent> fresh = ParseFaultEvent(text, fields);
      const Status status = ParseFaultEventInto(text, event, fields);
      REQUIRE(status.ok() == fresh.ok());
      if (!fresh) {
        CHECK(status.ToString() == fresh.error().ToString());
        continue;
      }
      ++read;
      CHECK(Describe(event) == Describe(fresh));
      CHECK(event.fields == fresh->fields);
      CHECK(event.evidence == fresh->evidence);
      CHECK(event.labels == fresh->labels);
      if (i % 3 == 0) {
        const EventFields flip =
            fields == EventFields::kKeep ? EventFields::kCheckOnly : EventFields::kKeep;
        REQUIRE(ParseFaultEventInto(text, other, flip).ok());
        REQUIRE(ParseFaultEventInto(text, other, fields).ok());
        CHECK(Describe(other) == Describe(fresh));
        CHECK(other.evidence == fresh->evidence);
      }
    }
    CHECK(read > 500);
  }
}

TEST_CASE(
    "simdjson's path reads an event, and leaves raw control bytes and huge integers to "
    "nlohmann") {
  FaultEvent event;
  std::optional<Status> fast = ParseFaultEventSimdjson(kEvent, event);
  REQUIRE(fast);
  REQUIRE(fast->ok());
  CHECK(event.threshold->key == std::vector<std::string>{"device", "port"});
  CHECK(event.peer == "10.0.4.12");
  CHECK_FALSE(ParseFaultEventSimdjson(std::string(kEvent) + std::string(1, '\0'), event));
  CHECK_FALSE(ParseFaultEventSimdjson("{\"schema\":\"a\x01b\"}", event));
  CHECK_FALSE(ParseFaultEventSimdjson("{\"schema\":18446744073709551616}", event));
  CHECK(ParseFaultEvent("{\"schema\":18446744073709551616}").error().message() ==
        "event key 'schema' is missing or not an integer");
}

}  // namespace
}  // namespace faultline
