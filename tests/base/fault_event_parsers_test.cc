// SPDX-License-Identifier: Apache-2.0
// ParseFaultEvent reads with simdjson and falls back to nlohmann for what
// simdjson does not take. Both must give every input the same answer: the
// same event, or the same status code and message. Here, over a real event
// and every mutation of it that the validation distinguishes (each key
// removed, each value replaced by each JSON type and the integers at the
// edges of 32 and 64 bits, repeated keys), against nlohmann's own reading.
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
    for (const std::string& v : values) {
      nlohmann::json with = base;
      with[key] = nlohmann::json::parse(v);
      out.push_back(with.dump());
      // The same key again at the end: both readers keep the last one.
      std::string text = base.dump();
      text.pop_back();
      text.append(",\"").append(key).append("\":").append(v).append("}");
      out.push_back(std::move(text));
    }
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
    if (ParseFaultEventSimdjson(text)) ++fast;
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

TEST_CASE(
    "simdjson's path reads an event, and leaves raw control bytes and huge integers to "
    "nlohmann") {
  auto fast = ParseFaultEventSimdjson(kEvent);
  REQUIRE(fast);
  REQUIRE(fast->ok());
  CHECK((*fast)->threshold->key == std::vector<std::string>{"device", "port"});
  CHECK((*fast)->peer == "10.0.4.12");
  CHECK_FALSE(ParseFaultEventSimdjson(std::string(kEvent) + std::string(1, '\0')));
  CHECK_FALSE(ParseFaultEventSimdjson("{\"schema\":\"a\x01b\"}"));
  CHECK_FALSE(ParseFaultEventSimdjson("{\"schema\":18446744073709551616}"));
  CHECK(ParseFaultEvent("{\"schema\":18446744073709551616}").error().message() ==
        "event key 'schema' is missing or not an integer");
}

}  // namespace
}  // namespace faultline
