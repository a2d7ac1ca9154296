// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/log_record.h"
#include "base/status.h"
#include "base/vocabulary.h"

namespace faultline {

// How many matches of a rule, within `window`, make the node suspect. The
// count is kept per node and per value of the `key` captures (e.g. the IB
// port), so five flaps spread over five ports do not add up.
struct EventThreshold {
  int count = 1;
  std::chrono::seconds window{0};
  std::vector<std::string> key;  // capture names

  friend bool operator==(const EventThreshold&, const EventThreshold&) = default;
};

// What the agent publishes (one Kafka message, key = node) and the tainter
// consumes. This struct and its JSON form are the one contract between the
// two programs; change it only by adding optional fields, and bump
// kSchemaVersion when an old reader could misread a new event.
//
// JSON (every key always present unless marked optional):
//   {"schema":1, "id":"…32 hex…", "node":"gpu-17", "boot_id":"…",
//    "source":"kmsg", "origin":"kernel", "rule":"nvidia.xid", "pack":"nvidia-xid",
//    "category":"hardware", "severity":"critical", "action":"taint",
//    "summary":"Xid 79: GPU has fallen off the bus; reset or RMA",
//    "fields":{"xid":"79","pci":"0000:3b:00"}, "message":"NVRM: Xid (PCI:0000:3b:00): 79, …",
//    "log_time":"2026-11-22T07:02:53.179000Z", "detected_time":"…Z",
//    "labels":{"priority":"4"}, "suppressed":0,
//    "threshold":{"count":5,"window":"24h","key":["device","port"]},   (optional)
//    "expire":"1h",                                                    (optional)
//    "peer":"10.0.4.12",                                               (optional)
//    "condition":"GPUFault",                                           (optional)
//    "recover":"reboot", "probation":"10m",                            (optional)
//    "clears":["nvidia.xid"]}                                          (optional)
struct FaultEvent {
  static constexpr int kSchemaVersion = 1;
  // `message` is cut to this many bytes (on a UTF-8 boundary, after each
  // byte that is not valid UTF-8 is replaced by U+FFFD), so one huge
  // log line cannot make a huge Kafka message or node annotation.
  static constexpr std::size_t kMaxMessageBytes = 2048;
  // Each named capture is cut to this many bytes where the match is made
  // (RuleSet), and the summary to kMaxSummaryBytes: a capture such as
  // NCCL WARN's `(?P<message>.+)` of a 250 KiB line would otherwise be held
  // whole in the event, its summary and the agent's suppression key.
  static constexpr std::size_t kMaxFieldBytes = 512;
  static constexpr std::size_t kMaxSummaryBytes = 1024;

  std::string id;       // MakeEventId(node, source, cursor, rule): a re-sent event has the same id
  std::string node;     // spec.nodeName; also the Kafka key
  std::string boot_id;  // /proc/sys/kernel/random/boot_id of the node when detected
  std::string source;   // the Source that read the line: "kmsg", "journal", "podlog", …
  Origin origin = Origin::kAny;
  std::string rule;  // rule id: the reason shown on the node
  std::string pack;  // the rule pack that defined it
  std::string category;
  Severity severity = Severity::kWarning;
  Action action = Action::kEvent;
  std::string summary;                        // at most kMaxSummaryBytes
  std::map<std::string, std::string> fields;  // the named captures, each at most kMaxFieldBytes
  std::string message;                        // the log line, at most kMaxMessageBytes
  std::chrono::system_clock::time_point log_time;
  std::chrono::system_clock::time_point detected_time;
  Labels labels;
  // Repeats of the same (rule, capture key) folded into this event by the
  // agent's suppression window: this event stands for 1 + suppressed lines.
  std::uint64_t suppressed = 0;
  std::optional<EventThreshold> threshold;     // absent: one match is enough
  std::optional<std::chrono::seconds> expire;  // absent: a taint stays until lifted by hand
  // The rule's `peer` capture's value: the address of the remote end this
  // line blames (an NCCL IB completion error's peer). The tainter resolves
  // it to a node and counts distinct reporters per accused node
  // (tainter/correlation/). Optional in the JSON ("peer"); empty: none.
  std::string peer;
  // The rule's `condition:` (a NodeCondition type such as "GPUFault"); empty:
  // the tainter maps the category (tainter/core/conditions.h). JSON key
  // "condition", optional.
  std::string condition;
  // How the fault ends besides `expire` and a person (tainter/core/recovery.h):
  // the rule's `recover:` ("reboot": the node's boot id changed and it stayed
  // quiet for `probation`); empty: no such way. JSON "recover", "probation".
  std::string recover;
  std::optional<std::chrono::seconds> probation;  // absent: the tainter's default
  // A `clear:` rule's match: the rule ids whose reasons it lifts (a recovery
  // line). JSON "clears", optional.
  std::vector<std::string> clears;
  // The lines its source read just before this one, oldest first (the AER
  // lines before an Xid 79, the NCCL lines before a watchdog timeout): the
  // agent attaches them to tainting events only, so the tainter's Event and
  // `explain` can show what led up to the fault. Bounded like `message` is
  // (invalid UTF-8 replaced, each line cut to kMaxEvidenceLineBytes, at most
  // kMaxEvidenceLines lines and kMaxEvidenceBytes in all, the newest kept).
  // JSON "evidence", optional.
  static constexpr std::size_t kMaxEvidenceLines = 8;
  static constexpr std::size_t kMaxEvidenceLineBytes = 512;
  static constexpr std::size_t kMaxEvidenceBytes = 2048;
  std::vector<std::string> evidence;
};

// Keeps the newest of `lines` (oldest first) within FaultEvent's evidence
// bounds, each cut on a UTF-8 boundary: what an event may carry.
std::vector<std::string> BoundEvidence(std::vector<std::string> lines);

// Stable id of the event for one rule on one record: 32 lowercase hex digits
// derived from node, source, cursor and rule only.
std::string MakeEventId(std::string_view node, std::string_view source, std::string_view cursor,
                        std::string_view rule);
// The same id assigned to `out` (its buffer reused: one event per line
// matched by `faultline scan`).
void AssignEventId(std::string& out, std::string_view node, std::string_view source,
                   std::string_view cursor, std::string_view rule);

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string TruncateUtf8(std::string_view text, std::size_t max_bytes);
// The same cut as a view of `text`, for a caller that copies it into a
// buffer of its own.
std::string_view TruncateUtf8View(std::string_view text, std::size_t max_bytes);

nlohmann::json ToJson(const FaultEvent& event);
// The JSON text; never throws (invalid UTF-8 in a log line is replaced).
// Written directly (base/json_text.h), byte for byte what
// ToJson(event).dump(-1, ' ', false, replace) gives: keys sorted.
std::string SerializeFaultEvent(const FaultEvent& event);

// The order of an event's keys in its JSON text: kSorted, the wire form
// (SerializeFaultEvent); kSchema, the schema's order with the optional keys
// added since (`condition`, `peer`) last, as `faultline scan` prints it.
enum class EventKeyOrder { kSorted, kSchema };

// Appends the event's `"key":value` members, comma-separated, without the
// braces, so that a caller can put members of its own before them (`first`:
// no comma before the first member).
void AppendFaultEventMembers(std::string& out, const FaultEvent& event, EventKeyOrder order,
                             bool first);

// One entry of an event's string map (`fields`, `labels`), as views.
using StringViewPair = std::pair<std::string_view, std::string_view>;

// A FaultEvent as views into what its writer already holds (`faultline
// scan`: the rule, its match and the line), for AppendFaultEventMembers:
// the same JSON without first copying every string, map and list into a
// FaultEvent. Members mean what FaultEvent's of the same names do;
// `fields` and `labels` are sorted by key, each key once (as FaultEvent's
// std::maps are); `threshold` null: absent. Valid while what it views is.
struct FaultEventView {
  std::string_view id;
  std::string_view node;
  std::string_view boot_id;
  std::string_view source;
  Origin origin = Origin::kAny;
  std::string_view rule;
  std::string_view pack;
  std::string_view category;
  Severity severity = Severity::kWarning;
  Action action = Action::kEvent;
  std::string_view summary;
  std::span<const StringViewPair> fields;
  std::string_view message;  // cut and made valid UTF-8 as FaultEvent's is when written
  std::chrono::system_clock::time_point log_time;
  std::chrono::system_clock::time_point detected_time;
  std::span<const StringViewPair> labels;
  std::uint64_t suppressed = 0;
  const EventThreshold* threshold = nullptr;
  std::optional<std::chrono::seconds> expire;
  std::string_view peer;
  std::string_view condition;
  std::string_view recover;
  std::optional<std::chrono::seconds> probation;
  std::span<const std::string> clears;
  std::span<const std::string> evidence;
};

// The same members, byte for byte what the FaultEvent holding the same
// values gives (one writer serves both).
void AppendFaultEventMembers(std::string& out, const FaultEventView& event, EventKeyOrder order,
                             bool first);

// What a writer of many events in the schema's order keeps from one event
// to the next (`faultline scan`): the JSON text of the members an event
// shares with an earlier one (node to action, the summary and the optional
// members that end the event, per rule; the times; each label), each kept
// with the values it was written from and used only when this event's
// values are the same, so the bytes are those AppendFaultEventMembers
// writes. Not thread-safe: one per writer.
class EventTextMemo {
 public:
  EventTextMemo();
  ~EventTextMemo();
  EventTextMemo(const EventTextMemo&) = delete;
  EventTextMemo& operator=(const EventTextMemo&) = delete;

  struct State;  // base/fault_event.cc
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// AppendFaultEventMembers(out, event, EventKeyOrder::kSchema, first), byte
// for byte, with what `memo` kept from earlier events reused.
void AppendFaultEventMembers(std::string& out, const FaultEventView& event, EventTextMemo& memo,
                             bool first);

// The event id (MakeEventId) written into `out`, 32 lowercase hex digits.
void WriteEventId(std::span<char, 32> out, std::string_view node, std::string_view source,
                  std::string_view cursor, std::string_view rule);

// Event ids (WriteEventId) of many events of one node and source whose
// cursors start alike, as a scan's "FILE:LINE" do. The hashes' states after
// the shared start are kept (the second's per rule, as it begins with the
// rule), so an id costs the bytes that differ: hashing each id whole was
// 5.7% of the CPU of a scan where 5% of the lines matched (bench/README.md).
class EventIdWriter {
 public:
  // WriteEventId(out, node, source, cursor_start + cursor_rest, rule).
  void Write(std::span<char, 32> out, std::string_view node, std::string_view source,
             std::string_view cursor_start, std::string_view cursor_rest, std::string_view rule);

 private:
  bool started_ = false;
  std::string node_, source_, cursor_start_;  // what the states below are for
  std::uint64_t a_ = 0;                       // the first hash after them
  // The second hash after a rule and cursor_start, for the rule it names.
  struct RuleState {
    const char* at = nullptr;  // the rule id it was found for (by address)
    std::size_t size = 0;
    bool valid = false;
    std::string rule;
    std::uint64_t b = 0;
  };
  // Found by where the rule id's bytes are (a scan's rules outlive it),
  // the id compared before use: hashing the id's bytes to look it up in an
  // unordered_map was 0.8% of the samples of a scan of user-gpu's 10%
  // corpus. A
  // rule that finds no slot takes another's: its state is computed again.
  static constexpr std::size_t kSlots = 64;
  std::array<RuleState, kSlots> b_;
};

// Never throws. kInvalidArgument: not JSON, a required key missing or of the
// wrong type, an unknown enum value; kFailedPrecondition: a schema version
// this build does not understand. The message names the key at fault.
// What ParseFaultEvent keeps of the event's `fields` (the named captures)
// and `evidence` (the lines before it). kCheckOnly: checked exactly as with
// kKeep (an event with a bad `fields` or `evidence` is refused all the same,
// with the same message) but left empty, for a reader that never looks at
// them (the tainter's correlation consumer, which reads every event of the
// fleet): building the map and the up to 8 lines is a good share of a parse.
enum class EventFields { kKeep, kCheckOnly };

Result<FaultEvent> ParseFaultEvent(std::string_view json_text,
                                   EventFields fields = EventFields::kKeep);
// The same reading into `event`, whose strings, maps and lines keep their
// buffers: a reader of many events (the tainter's two consumers) copies an
// event's text into the last one's buffers instead of allocating each
// string, capture and evidence line anew and freeing it after. `event`
// then holds what ParseFaultEvent would return; after an error, part of it.
Status ParseFaultEventInto(std::string_view json_text, FaultEvent& event,
                           EventFields fields = EventFields::kKeep);
Result<FaultEvent> FaultEventFromJson(const nlohmann::json& json);

}  // namespace faultline
