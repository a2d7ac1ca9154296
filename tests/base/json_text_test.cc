// SPDX-License-Identifier: Apache-2.0
// The direct JSON writers (base/json_text.h, SerializeFaultEvent) must give
// the bytes nlohmann::json gave before them: the tainter, kcat users and
// `faultline scan` consumers read this text, and the wire form is a contract.
#include "base/json_text.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/time_format.h"

namespace faultline {
namespace {

std::string NlohmannString(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Direct(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

// Random bytes biased toward what breaks escapers: control characters,
// quotes, backslashes, UTF-8 lead and continuation bytes, and the bytes at
// the edges of RFC 3629's ranges (C0/C1, E0/ED/F0/F4 with their second
// bytes, F5-FF).
std::string RandomText(std::mt19937& rng) {
  static constexpr unsigned char kInteresting[] = {0x00, 0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F,
                                                   0x20, '"',  '\\', '/',  'a',  0x7F, 0x80, 0x8F,
                                                   0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                                                   0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  std::uniform_int_distribution<int> length(0, 24), pick(0, 3), any(0, 255),
      interesting(0, sizeof(kInteresting) - 1);
  std::string text(static_cast<std::size_t>(length(rng)), '\0');
  for (char& c : text) {
    c = static_cast<char>(pick(rng) == 0 ? any(rng) : kInteresting[interesting(rng)]);
  }
  return text;
}

// What FormatRfc3339 wrote before its fast path: gmtime_r and snprintf.
std::string GmtimeRfc3339(std::int64_t us) {
  std::int64_t secs = us / 1'000'000, frac = us % 1'000'000;
  if (frac < 0) frac += 1'000'000, secs -= 1;
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[80];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

}  // namespace

TEST_CASE("FormatRfc3339 writes what gmtime_r and snprintf did") {
  std::mt19937_64 rng(7);
  // All a time_point of nanoseconds holds: the years 1677 to 2262.
  std::uniform_int_distribution<std::int64_t> any_us(-9'000'000'000'000'000, 9'000'000'000'000'000);
  for (std::int64_t us : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{951'782'400'000'000},
                          std::int64_t{-86'400'000'001}, std::int64_t{4'107'542'399'999'999}}) {
    CHECK(FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::microseconds(us))) ==
          GmtimeRfc3339(us));
  }
  for (int i = 0; i < 100000; ++i) {
    const std::int64_t us = any_us(rng);
    const std::string direct =
        FormatRfc3339(std::chrono::system_clock::time_point(std::chrono::microseconds(us)));
    if (direct != GmtimeRfc3339(us)) {
      CAPTURE(us);
      CHECK(direct == GmtimeRfc3339(us));
      break;
    }
  }
}

TEST_CASE("AppendJsonString writes the bytes nlohmann::json dumps, invalid UTF-8 included") {
  for (const std::string& text :
       {std::string(), std::string("plain"), std::string("quote \" back \\ slash /"),
        std::string("\b\f\n\r\t\x01\x1f\x7f", 8), std::string("\0nul", 4),
        std::string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),  // valid 2, 3, 4 bytes
        std::string("\xC3"), std::string("\xE2\x82"), std::string("\xF0\x9F\x98"),  // cut
        std::string("\xC0\xAF \xE0\x80\xAF \xED\xA0\x80 \xF4\x90\x80\x80 \xFF"),    // invalid
        std::string("\xE2\x82"
                    "a\xE2\x28\xA1")}) {
    CAPTURE(text);
    CHECK(Direct(text) == NlohmannString(text));
  }
  std::mt19937 rng(12);
  for (int i = 0; i < 200000; ++i) {
    const std::string text = RandomText(rng);
    if (Direct(text) != NlohmannString(text)) {
      CAPTURE(text);
      CHECK(Direct(text) == NlohmannString(text));
      break;
    }
  }
}

// Short texts (a capture's name: "op", "seq") are the most common strings in an
// event: every text of 0 to 2 bytes, and every one of 3 bytes from those that
// break escapers and a plain letter, must be what nlohmann::json dumps.
TEST_CASE("AppendJsonString writes every text of up to 3 bytes as nlohmann::json does") {
  std::size_t checked = 0;
  const auto check = [&](const std::string& text) {
    if (Direct(text) != NlohmannString(text)) {
      CAPTURE(text);
      CHECK(Direct(text) == NlohmannString(text));
    }
    ++checked;
  };
  check("");
  for (int a = 0; a < 256; ++a) {
    check(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) check({static_cast<char>(a), static_cast<char>(b)});
  }
  const std::string some = std::string("\x00\x1f \"\\az\x7f\x80\xbf\xc2\xc3\xe2\xed\xf0\xff", 16);
  for (char a : some) {
    for (char b : some) {
      for (char c : some) check({a, b, c});
    }
  }
  CHECK(checked == 1 + 256 + 256 * 256 + 16 * 16 * 16);
}

// AppendJsonString copies plain text 16 (SSE2) or 8 bytes at a time: a byte
// to escape or to check as UTF-8 must be found at every offset within such a
// block, and at the tail after the last one.
TEST_CASE("AppendJsonString finds a byte to escape at every offset of a plain run") {
  for (const std::string& special :
       std::vector<std::string>{"\"", "\\", std::string(1, '\0'), "\x1f", "\n", "\x7f", "\xC3\xA9",
                                "\xFF", "\x80", " "}) {
    for (std::size_t before = 0; before < 40; ++before) {
      for (const std::size_t after : {0U, 1U, 7U, 8U, 9U, 15U, 16U, 17U}) {
        const std::string text = std::string(before, 'a') + special + std::string(after, 'z');
        CAPTURE(text);
        CHECK(Direct(text) == NlohmannString(text));
      }
    }
  }
}

// The last bytes of a text are read as its last whole 8 or 16 again, those
// before the byte asked about left out: a byte to escape among them (just
// written) must not be found twice, and one after them must be found, for
// every length and every two places, and a byte that only differs from a
// special one by its low bit ('#' beside '"') is plain.
TEST_CASE("AppendJsonString finds each of two bytes to escape in a text's last 8 or 16") {
  for (const std::string& special :
       std::vector<std::string>{"\"", "\\", "\x01", "\xC3\xA9", "\xFF", "\n"}) {
    for (std::size_t size = 1; size <= 40; ++size) {
      for (std::size_t first = 0; first < size; ++first) {
        for (std::size_t second = first; second <= size; ++second) {
          std::string text(size, '#');
          text.replace(first, 1, special);
          if (second > first && second < size) text.replace(second + special.size() - 1, 1, "\"");
          CAPTURE(text);
          REQUIRE(Direct(text) == NlohmannString(text));
        }
      }
    }
  }
}

TEST_CASE("SerializeFaultEvent writes the bytes ToJson(...).dump() did") {
  FaultEvent e;
  e.id = MakeEventId("gpu-17", "kmsg", "boot-1:42", "nvidia.xid");
  e.node = "gpu-17";
  e.boot_id = "b\x01oot";
  e.source = "kmsg";
  e.origin = Origin::kKernel;
  e.rule = "nvidia.xid";
  e.pack = "nvidia-xid";
  e.category = "hardware";
  e.severity = Severity::kCritical;
  e.action = Action::kTaint;
  e.summary = "Xid 79: \"GPU\" has fallen off the bus \xFF";
  e.fields = {{"xid", "79"}, {"pci", "0000:3b:00"}, {"b\"ad", "\xE2\x82"}};
  e.message = "NVRM: Xid (PCI:0000:3b:00): 79,\tpid=1234, GPU has fallen off the bus.\xC3";
  e.log_time = *ParseRfc3339("2026-11-22T07:02:53.179Z");
  e.detected_time = *ParseRfc3339("2026-11-22T07:02:53.200Z");
  e.labels = {{"priority", "4"}, {"file", "/var/log/k\\ern.log"}};
  e.suppressed = 18446744073709551615ULL;
  const auto dumped = [](const FaultEvent& event) {
    return ToJson(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  CHECK(SerializeFaultEvent(e) == dumped(e));  // no optional key
  e.threshold = EventThreshold{5, std::chrono::seconds(86400), {"pci", "x\"id"}};
  e.expire = std::chrono::seconds(3600);
  e.peer = "10.0.4.12";
  e.condition = "GPUFault";
  e.recover = "reboot";
  e.probation = std::chrono::seconds(1800);
  e.clears = {"nvidia.xid", "nvlink.\"down"};
  CHECK(SerializeFaultEvent(e) == dumped(e));  // every optional key
  e.threshold->key.clear();
  e.fields.clear();
  e.labels.clear();
  e.message = std::string(3000, 'x');  // cut to kMaxMessageBytes
  CHECK(SerializeFaultEvent(e) == dumped(e));
  // Not ASCII, cut: never within a character.
  e.message = std::string(2047, 'x') + "\xC3\xA9 tail";
  e.evidence = {"ok", std::string(600, 'y'), "caf\xC3\xA9 \xFF"};
  CHECK(SerializeFaultEvent(e) == dumped(e));
}

TEST_CASE("the schema order lists the schema's keys first and the optional ones last") {
  FaultEvent e;
  e.threshold = EventThreshold{2, std::chrono::seconds(60), {}};
  e.expire = std::chrono::seconds(60);
  e.peer = "p";
  e.condition = "c";
  std::string out;
  AppendFaultEventMembers(out, e, EventKeyOrder::kSchema, /*first=*/true);
  std::vector<std::string> keys;
  const auto parsed = nlohmann::ordered_json::parse("{" + out + "}");
  for (const auto& [key, value] : parsed.items()) {
    keys.push_back(key);
  }
  CHECK(keys == std::vector<std::string>{
                    "schema",    "id",      "node",      "boot_id",       "source", "origin",
                    "rule",      "pack",    "category",  "severity",      "action", "summary",
                    "fields",    "message", "log_time",  "detected_time", "labels", "suppressed",
                    "threshold", "expire",  "condition", "peer"});
}

// `faultline scan` writes each event through an EventTextMemo, which reuses
// the text of members an earlier event had (a rule's node-to-action run, its
// summary, the times, each label): every event of a sequence in which each
// of those changes, alone or together, back and forth, must be the bytes
// written without the memo. Two rules have the same id at two addresses
// (the memo finds a rule by address, then compares).
TEST_CASE("EventTextMemo writes the bytes AppendFaultEventMembers writes, event after event") {
  std::vector<std::string> rules = {"nvidia.xid", "nvidia.xid", "ib.\"flap", ""};
  std::vector<std::string> packs = {"nvidia-xid", "other", "ib", ""};
  // And more rules than the memo has slots for: some take others' slots.
  for (int r = 0; r < 96; ++r) {
    rules.push_back("rule-" + std::to_string(r));
    packs.push_back("pack");
  }
  const std::vector<std::string> summaries = {"Xid 79", "Xid \"{x}\"", "caf\xC3\xA9 \xFF", ""};
  const std::vector<std::string> keys = {"a", "file", "line", "m", "p", "z"};
  const auto t0 = *ParseRfc3339("2026-11-22T07:02:53.179Z");
  const EventThreshold threshold{2, std::chrono::seconds(60), {"x"}};
  const EventThreshold other_threshold{2, std::chrono::seconds(60), {"x", "y"}};
  const std::vector<std::string> clears_one = {"a.b"}, clears_two = {"a.b", "c\"d"};
  const std::vector<std::string> evidence = {"before"};
  EventTextMemo memo;
  std::size_t compared = 0;
  for (int i = 0; i < 900; ++i) {
    const auto pick = [i](int period, std::size_t n) {
      return static_cast<std::size_t>(i / period) % n;
    };
    FaultEventView e;
    const std::string id = MakeEventId("n", "file", std::to_string(i), "r");
    e.id = id;
    e.node = pick(50, 2) ? "gpu-\x01" : "gpu-1";
    e.boot_id = pick(70, 2) ? "b" : "";
    e.source = pick(90, 2) ? "kmsg" : "file";
    e.origin = pick(11, 2) ? Origin::kKernel : Origin::kAny;
    const std::size_t r = i < 300 ? pick(3, 4) : static_cast<std::size_t>(i * 7) % rules.size();
    e.rule = rules[r];
    // Another pack, the same rule id's bytes.
    e.pack = pick(23, 2) ? std::string_view(packs[r]) : std::string_view("p");
    e.category = pick(13, 2) ? "hardware" : "";
    e.severity = pick(17, 2) ? Severity::kCritical : Severity::kWarning;
    e.action = pick(19, 2) ? Action::kTaint : Action::kEvent;
    // Steady for a while, then changing with every event.
    e.summary =
        pick(5, 2) ? summaries[pick(1, summaries.size())] : summaries[pick(7, summaries.size())];
    const std::string message = std::string(static_cast<std::size_t>(i % 24), 'm') +
                                (i % 3 ? "\xC3\xA9" : "\xFF") +
                                std::string(static_cast<std::size_t>(i % 9), 'z');
    e.message = message;
    e.log_time = pick(4, 2) ? t0 : t0 + std::chrono::milliseconds(i);
    e.detected_time = pick(100, 2) ? t0 : t0 + std::chrono::seconds(1);
    const std::string file = pick(40, 2) ? "/var/log/k\"ern.log" : "/tmp/a.log";
    const std::string line = std::to_string(i / 2);
    std::vector<StringViewPair> labels;
    const std::size_t label_count = pick(29, 7);  // 0 to 6: past the memo's 4 pairs
    for (std::size_t k = 0; k < label_count; ++k) {
      labels.emplace_back(keys[k], k % 2 ? std::string_view(line) : std::string_view(file));
    }
    e.labels = labels;
    // 0 to 10 fields, their names changing too.
    const std::vector<std::string> names = {"a", "b\"", "c", "d", "e", "f", "g", "h", "i", "j"};
    std::vector<StringViewPair> fields;
    for (std::size_t k = 0; k < pick(3, 11); ++k) {
      fields.emplace_back(k == 1 && pick(37, 2) ? std::string_view("b2") : names[k], line);
    }
    e.fields = fields;
    if (i % 5 == 0) e.threshold = &threshold;
    // The optional members that end an event, steady for a while, then
    // changing: each kept per rule with the values it was written from.
    if (pick(6, 3) == 1) e.threshold = &other_threshold;
    if (pick(8, 2)) e.expire = std::chrono::seconds(pick(31, 3) * 60);
    if (pick(10, 2)) e.condition = pick(43, 2) ? "GPUFault" : "NetworkFault";
    if (pick(12, 3) == 2) e.peer = pick(1, 2) ? "10.0.0.1" : "10.0.0.2";  // every event
    if (pick(14, 2)) e.recover = "reboot";
    if (pick(16, 2)) e.probation = std::chrono::seconds(600);
    if (pick(18, 3) > 0) e.clears = pick(18, 3) == 1 ? clears_one : clears_two;
    if (i % 97 == 0) e.evidence = evidence;
    std::string with_memo = "{";
    std::string without = "{";
    AppendFaultEventMembers(with_memo, e, memo, /*first=*/true);
    AppendFaultEventMembers(without, e, EventKeyOrder::kSchema, /*first=*/true);
    if (with_memo != without) {
      CAPTURE(i);
      CHECK(with_memo == without);
      break;
    }
    ++compared;
  }
  CHECK(compared == 900);
}

// The memo's writer asks once whether an event has any of the optional
// members that end the schema's order, and writes none when it says no:
// each of them alone, none, and all, must be written as without the memo.
TEST_CASE("EventTextMemo writes each optional member an event has, alone or with the others") {
  const EventThreshold threshold{3, std::chrono::seconds(600), {"port"}};
  const std::vector<std::string> clears = {"ib.down"};
  const std::vector<std::string> evidence = {"line before"};
  using Set = std::function<void(FaultEventView&)>;
  const std::vector<std::pair<std::string, Set>> cases = {
      {"none", [](FaultEventView&) {}},
      {"threshold", [&](FaultEventView& e) { e.threshold = &threshold; }},
      {"expire", [](FaultEventView& e) { e.expire = std::chrono::seconds(60); }},
      {"clears", [&](FaultEventView& e) { e.clears = clears; }},
      {"condition", [](FaultEventView& e) { e.condition = "GPUFault"; }},
      {"evidence", [&](FaultEventView& e) { e.evidence = evidence; }},
      {"peer", [](FaultEventView& e) { e.peer = "10.0.4.12"; }},
      {"probation", [](FaultEventView& e) { e.probation = std::chrono::seconds(1); }},
      {"recover", [](FaultEventView& e) { e.recover = "reboot"; }},
  };
  EventTextMemo memo;
  const auto base = [] {
    FaultEventView e;
    e.id = "0123456789abcdef0123456789abcdef";
    e.node = "gpu-1";
    e.source = "file";
    e.rule = "ib.flap";
    e.pack = "ib";
    e.summary = "flap";
    e.message = "mlx5_core: link down";
    e.suppressed = 7;
    return e;
  };
  FaultEventView all = base();
  for (const auto& one : cases) {
    const std::string& name = one.first;
    CAPTURE(name);
    FaultEventView e = base();
    one.second(e);
    one.second(all);
    for (const FaultEventView* event : {&e, &all}) {
      std::string with_memo, without;
      AppendFaultEventMembers(with_memo, *event, memo, /*first=*/true);
      AppendFaultEventMembers(without, *event, EventKeyOrder::kSchema, /*first=*/true);
      CHECK(with_memo == without);
      if (name != "none") CHECK(with_memo.find(",\"" + name + "\":") != std::string::npos);
    }
  }
}

// The optional members are kept per rule with the values they were written
// from: an event whose tail differs from the one before in one value only
// (a threshold's key, a list's item, a duration) must not get the old text.
TEST_CASE("EventTextMemo rewrites an event's optional members when one value of them changes") {
  const EventThreshold threshold{3, std::chrono::seconds(600), {"port"}};
  const EventThreshold other_key{3, std::chrono::seconds(600), {"dev"}};
  const EventThreshold other_window{3, std::chrono::seconds(60), {"port"}};
  const std::vector<std::string> clears = {"ib.down"}, other_clears = {"ib.up"};
  const auto base = [&] {
    FaultEventView e;
    e.id = "0123456789abcdef0123456789abcdef";
    e.node = "gpu-1";
    e.source = "file";
    e.rule = "ib.flap";
    e.threshold = &threshold;
    e.expire = std::chrono::seconds(3600);
    e.clears = clears;
    e.condition = "NetworkFault";
    e.peer = "10.0.0.1";
    e.recover = "reboot";
    e.probation = std::chrono::seconds(600);
    return e;
  };
  const std::vector<std::function<void(FaultEventView&)>> changes = {
      [&](FaultEventView& e) { e.threshold = &other_key; },
      [&](FaultEventView& e) { e.threshold = &other_window; },
      [](FaultEventView& e) { e.threshold = nullptr; },
      [](FaultEventView& e) { e.expire = std::chrono::seconds(60); },
      [&](FaultEventView& e) { e.clears = other_clears; },
      [](FaultEventView& e) { e.condition = "GPUFault"; },
      [](FaultEventView& e) { e.peer = "10.0.0.2"; },
      [](FaultEventView& e) { e.recover = ""; },
      [](FaultEventView& e) { e.probation = std::chrono::seconds(60); },
  };
  EventTextMemo memo;
  for (std::size_t c = 0; c < changes.size(); ++c) {
    FaultEventView changed = base();
    changes[c](changed);
    // Steady, one change, steady again, and back.
    for (const FaultEventView& e : {base(), base(), changed, changed, base(), changed}) {
      CAPTURE(c);
      std::string with_memo, without;
      AppendFaultEventMembers(with_memo, e, memo, /*first=*/true);
      AppendFaultEventMembers(without, e, EventKeyOrder::kSchema, /*first=*/true);
      CHECK(with_memo == without);
    }
  }
}

// The memo compares what an event shares with earlier ones (a rule's run,
// its summary, its tail, each label) with the values it was written from,
// short ones a word at a time: a value changed in one byte, at any place, of
// any length up to 24, in place (the same address), must be written anew.
TEST_CASE("EventTextMemo tells apart values that differ in one byte anywhere") {
  EventTextMemo memo;
  std::size_t compared = 0;
  for (std::size_t size = 1; size <= 24; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      std::string rule(size, 'r'), node(size, 'n'), pack(size, 'p'), category(size, 'c'),
          summary(size, 's'), condition(size, 'k'), recover(size, 'v'), label(size, 'l');
      const std::vector<std::string*> parts = {&rule,    &node,      &pack,    &category,
                                               &summary, &condition, &recover, &label};
      for (std::string* part : parts) {
        for (int changed = 0; changed < 2; ++changed) {
          if (changed == 1) (*part)[at] = 'x';
          FaultEventView e;
          e.id = "0123456789abcdef0123456789abcdef";
          e.rule = rule;
          e.node = node;
          e.source = "file";
          e.pack = pack;
          e.category = category;
          e.summary = summary;
          e.condition = condition;
          e.recover = recover;
          const std::array<StringViewPair, 2> labels = {StringViewPair("file", label),
                                                        StringViewPair("line", "1")};
          e.labels = labels;
          std::string with_memo, without;
          AppendFaultEventMembers(with_memo, e, memo, /*first=*/true);
          AppendFaultEventMembers(without, e, EventKeyOrder::kSchema, /*first=*/true);
          if (with_memo != without) {
            CAPTURE(size);
            CAPTURE(at);
            CHECK(with_memo == without);
            return;
          }
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 2 * 8 * 300);
}

// Messages are checked for bytes above 0x7F 8 bytes at a time: one such
// byte (here never valid UTF-8) at any offset, in the words and the tail,
// and around the cut at kMaxMessageBytes, is replaced by U+FFFD before the
// cut, as the schema says, in both writers.
TEST_CASE("a message with one invalid byte anywhere is replaced, then cut") {
  FaultEvent e;
  std::size_t compared = 0;
  for (std::size_t length : {1U, 7U, 8U, 9U, 16U, 17U, 40U, 2047U, 2048U, 2049U, 2055U}) {
    for (std::size_t at = 0; at < length; ++at) {
      if (length > 64 && at > 20 && at + 20 < length) continue;  // the ends of long ones
      for (const char high : {'\xFF', '\x80', '\xC3'}) {
        e.message = std::string(length, 'x');
        e.message[at] = high;
        std::string wire = e.message;
        wire.replace(at, 1, "\xEF\xBF\xBD");
        if (wire.size() > FaultEvent::kMaxMessageBytes) {
          // Cut on a character boundary: U+FFFD whole or not at all.
          wire.resize(at + 3 <= FaultEvent::kMaxMessageBytes
                          ? FaultEvent::kMaxMessageBytes
                          : std::min(at, FaultEvent::kMaxMessageBytes));
        }
        const std::string member = ",\"message\":" + NlohmannString(wire) + ",";
        const std::string sorted = SerializeFaultEvent(e);
        std::string schema;
        AppendFaultEventMembers(schema, e, EventKeyOrder::kSchema, /*first=*/false);
        if (sorted.find(member) == std::string::npos || schema.find(member) == std::string::npos ||
            sorted != ToJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) {
          CAPTURE(length);
          CAPTURE(at);
          CHECK(sorted.find(member) != std::string::npos);
          CHECK(schema.find(member) != std::string::npos);
          return;
        }
        ++compared;
      }
    }
  }
  CHECK(compared > 500);
}

}  // namespace faultline
