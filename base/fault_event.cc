// SPDX-License-Identifier: Apache-2.0
#include "base/fault_event.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "base/fault_event_reader.h"
#include "base/fault_event_simdjson.h"
#include "base/json_text.h"
#include "base/time_format.h"

namespace faultline {
namespace {

// FNV-1a over the parts, each followed by a NUL so that ("ab","c") and
// ("a","bc") differ. Two seeds give 128 bits: ids are compared, never trusted
// for security, so a non-cryptographic hash is enough.
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
constexpr std::uint64_t kSeedA = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kSeedB = 0x84222325cbf29ce4ULL;

std::uint64_t FnvBytes(std::uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

std::uint64_t FnvEnd(std::uint64_t h) { return h * kFnvPrime; }  // the NUL after a part

std::uint64_t Fnv1a(std::uint64_t seed, std::initializer_list<std::string_view> parts) {
  std::uint64_t h = seed;
  for (std::string_view part : parts) h = FnvEnd(FnvBytes(h, part));
  return h;
}

// Each byte's two lowercase hex digits.
constexpr std::array<std::array<char, 2>, 256> kHexPairs = [] {
  constexpr char kHex[] = "0123456789abcdef";
  std::array<std::array<char, 2>, 256> pairs{};
  for (std::size_t i = 0; i < 256; ++i) pairs[i] = {kHex[i >> 4], kHex[i & 0xF]};
  return pairs;
}();

// What "%016llx%016llx" gave, without snprintf (~1,500 instructions), a byte
// at a time: a digit at a time was 225 instructions an id (callgrind, 11,064
// ids of user-gpu's 10% corpus).
void WriteIdHex(std::span<char, 32> out, std::uint64_t a, std::uint64_t b) {
  for (std::size_t i = 0; i < 8; ++i) {
    const std::size_t shift = 8 * (7 - i);
    std::memcpy(&out[2 * i], kHexPairs[(a >> shift) & 0xFF].data(), 2);
    std::memcpy(&out[16 + 2 * i], kHexPairs[(b >> shift) & 0xFF].data(), 2);
  }
}

// True when every byte of `text` is below 0x80, tested 8 bytes at a time:
// WireString, mostly std::all_of's byte loop, was 1.2% of the samples of a
// scan of user-gpu's 10% corpus (bench/README.md).
bool IsAscii(std::string_view text) {
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  std::size_t i = 0;
  std::uint64_t any = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    any |= word;
  }
  for (; i < text.size(); ++i) any |= static_cast<unsigned char>(text[i]);
  return (any & kHighBits) == 0;
}

// a == b, without a call to memcmp for up to 16 bytes (two words that
// overlap): the memos and the id writer compare ~14 strings an event, most
// of them short (a rule id, a category, a node), and memcmp's call was ~30
// instructions each (callgrind, user-gpu's 10% corpus; bench/README.md).
bool SameText(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const auto words_equal = [&](auto word) {
    decltype(word) a_first, a_last, b_first, b_last;
    std::memcpy(&a_first, a.data(), sizeof(word));
    std::memcpy(&b_first, b.data(), sizeof(word));
    std::memcpy(&a_last, a.data() + n - sizeof(word), sizeof(word));
    std::memcpy(&b_last, b.data() + n - sizeof(word), sizeof(word));
    return ((a_first ^ b_first) | (a_last ^ b_last)) == 0;
  };
  if (n > 16) return std::memcmp(a.data(), b.data(), n) == 0;
  if (n >= 8) return words_equal(std::uint64_t{});
  if (n >= 4) return words_equal(std::uint32_t{});
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// The slot of `slots` (a power of two up to 2^16; each slot has `at` and
// `size`, what it was last found for) for the string at `s`'s address (a
// scan's rule ids live as long as the scan): the one found for it before
// among the kProbes from where its address hashes (Fibonacci hashing, so
// that ids a fixed stride apart spread), else an unused one there, else the
// first. A slot's content is compared by the caller before use, so a slot
// taken over, or an address reused, costs a rewrite, never a wrong byte.
// Probing matters: with one slot per hash, user-gpu's 23 rules shared
// slots and 11% of its events rewrote their rule's members.
template <class Slot, std::size_t N>
Slot& FindSlot(std::array<Slot, N>& slots, std::string_view s) {
  static_assert(N > 0 && (N & (N - 1)) == 0 && N <= (1U << 16), "a power of two");
  constexpr std::size_t kProbes = 4;
  const std::uint64_t where = std::hash<const void*>{}(s.data()) ^ s.size();
  const auto home = static_cast<std::size_t>((where * 0x9E3779B97F4A7C15ULL) >> 48);
  Slot* unused = nullptr;
  for (std::size_t i = 0; i < kProbes; ++i) {
    Slot& slot = slots[(home + i) & (N - 1)];
    if (slot.at == s.data() && slot.size == s.size()) return slot;
    if (unused == nullptr && slot.at == nullptr) unused = &slot;
  }
  Slot& slot = unused != nullptr ? *unused : slots[home & (N - 1)];
  slot.at = s.data();
  slot.size = s.size();
  return slot;
}

// Length of the valid UTF-8 character at the start of `text`, or 0.
std::size_t ValidUtf8Length(std::string_view text) {
  if (static_cast<unsigned char>(text[0]) < 0x80) return 1;
  const Utf8Prefix prefix = ScanUtf8(text);
  return prefix.complete ? prefix.length : 0;
}

// The message as it goes on the wire: every byte that is not valid UTF-8
// replaced by U+FFFD (as the JSON serializer would), then cut to `max_bytes`
// on a character boundary. Replacing first keeps the bound: each replaced
// byte grows to three, so cutting first could triple the message.
std::string WireMessage(std::string_view text, std::size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  // Most log lines are ASCII: nothing to replace, and any cut is on a
  // character boundary.
  if (IsAscii(text)) {
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

void WriteEventId(std::span<char, 32> out, std::string_view node, std::string_view source,
                  std::string_view cursor, std::string_view rule) {
  WriteIdHex(out, Fnv1a(kSeedA, {node, source, cursor, rule}),
             Fnv1a(kSeedB, {rule, cursor, source, node}));
}

void EventIdWriter::Write(std::span<char, 32> out, std::string_view node, std::string_view source,
                          std::string_view cursor_start, std::string_view cursor_rest,
                          std::string_view rule) {
  if (!SameText(node, node_) || !SameText(source, source_) ||
      !SameText(cursor_start, cursor_start_) || !started_) {
    node_.assign(node);
    source_.assign(source);
    cursor_start_.assign(cursor_start);
    a_ = FnvBytes(Fnv1a(kSeedA, {node, source}), cursor_start);
    for (RuleState& state : b_) state.valid = false;
    started_ = true;
  }
  // The second hash starts with the rule: its state after the rule and the
  // cursor's start is kept per rule, in the slot of the rule id's address.
  RuleState& state = FindSlot(b_, rule);
  if (!state.valid || !SameText(state.rule, rule)) {
    state.rule.assign(rule);
    state.b = FnvBytes(Fnv1a(kSeedB, {rule}), cursor_start);
    state.valid = true;
  }
  const std::uint64_t a = Fnv1a(FnvEnd(FnvBytes(a_, cursor_rest)), {rule});
  const std::uint64_t b = Fnv1a(FnvEnd(FnvBytes(state.b, cursor_rest)), {source, node});
  WriteIdHex(out, a, b);
}

void AssignEventId(std::string& out, std::string_view node, std::string_view source,
                   std::string_view cursor, std::string_view rule) {
  std::array<char, 32> buf;
  WriteEventId(buf, node, source, cursor, rule);
  out.assign(buf.data(), buf.size());
}

std::string MakeEventId(std::string_view node, std::string_view source, std::string_view cursor,
                        std::string_view rule) {
  std::string id;
  AssignEventId(id, node, source, cursor, rule);
  return id;
}

std::string_view TruncateUtf8View(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of a sequence.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

std::string TruncateUtf8(std::string_view text, std::size_t max_bytes) {
  return std::string(TruncateUtf8View(text, max_bytes));
}

std::vector<std::string> BoundEvidence(std::vector<std::string> lines) {
  // Newest first until a bound is reached; the rest (the oldest) is dropped.
  std::size_t keep = 0;
  std::size_t bytes = 0;
  for (auto it = lines.rbegin(); it != lines.rend() && keep < FaultEvent::kMaxEvidenceLines; ++it) {
    it->resize(TruncateUtf8View(*it, FaultEvent::kMaxEvidenceLineBytes).size());  // in place
    if (bytes + it->size() > FaultEvent::kMaxEvidenceBytes) break;
    bytes += it->size();
    ++keep;
  }
  lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(keep));
  return lines;
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
  if (!e.evidence.empty()) {
    nlohmann::json lines = nlohmann::json::array();
    for (const std::string& line : e.evidence) {
      lines.push_back(WireMessage(line, FaultEvent::kMaxEvidenceLineBytes));
    }
    j["evidence"] = std::move(lines);
  }
  return j;
}

namespace {

// The event's members in one place, each written by WriteMember; the two key
// orders below say which come when.
enum class Member {
  kAction,
  kBootId,
  kCategory,
  kClears,
  kCondition,
  kDetectedTime,
  kEvidence,
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
  kProbation,
  kRecover,
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
    Member::kAction,     Member::kBootId,       Member::kCategory, Member::kClears,
    Member::kCondition,  Member::kDetectedTime, Member::kEvidence, Member::kExpire,
    Member::kFields,     Member::kId,           Member::kLabels,   Member::kLogTime,
    Member::kMessage,    Member::kNode,         Member::kOrigin,   Member::kPack,
    Member::kPeer,       Member::kProbation,    Member::kRecover,  Member::kRule,
    Member::kSchema,     Member::kSeverity,     Member::kSource,   Member::kSummary,
    Member::kSuppressed, Member::kThreshold,
};
// The schema's order (schema/faultline-event-v1.schema.json), then the
// optional keys added since, sorted: what `faultline scan` prints.
constexpr Member kSchemaOrder[] = {
    Member::kSchema,    Member::kId,         Member::kNode,      Member::kBootId,
    Member::kSource,    Member::kOrigin,     Member::kRule,      Member::kPack,
    Member::kCategory,  Member::kSeverity,   Member::kAction,    Member::kSummary,
    Member::kFields,    Member::kMessage,    Member::kLogTime,   Member::kDetectedTime,
    Member::kLabels,    Member::kSuppressed, Member::kThreshold, Member::kExpire,
    Member::kClears,    Member::kCondition,  Member::kEvidence,  Member::kPeer,
    Member::kProbation, Member::kRecover,
};

// An event's JSON written through a pointer into a buffer on the stack,
// appended to `out` in one piece when it is full and when the writer is
// done: each piece is a plain copy, without std::string's capacity check,
// call and terminator per append (about a hundred appends an event). Every
// write makes its room first; a string too long for the buffer is appended
// to `out` directly.
class EventText {
 public:
  explicit EventText(std::string& out) : out_(out) {}
  EventText(const EventText&) = delete;
  EventText& operator=(const EventText&) = delete;
  ~EventText() { Flush(); }

  void Put(char c) {
    Room(1);
    *p_++ = c;
  }
  [[gnu::always_inline]] void Put(std::string_view piece) {
    if (!Fits(piece.size())) {
      out_.append(piece);
      return;
    }
    std::memcpy(p_, piece.data(), piece.size());
    p_ += piece.size();
  }
  // `quoted_key` is the key with a comma before it and its quotes and
  // colon, `,"action":` (the schema's keys need no escaping), written from
  // its second byte for the first member.
  void Key(std::string_view quoted_key, bool& first) {
    Put(first ? quoted_key.substr(1) : quoted_key);
    first = false;
  }
  void String(std::string_view text) {
    if (!Fits(JsonStringBound(text.size()))) {
      AppendJsonString(out_, text);
      return;
    }
    p_ = WriteJsonString(p_, text);
  }
  // A name of the vocabulary (an action, a severity, an origin): letters
  // and dashes, nothing to escape.
  void Name(std::string_view name) {
    Room(name.size() + 2);
    *p_++ = '"';
    std::memcpy(p_, name.data(), name.size());
    p_ += name.size();
    *p_++ = '"';
  }
  // WireMessage(text, max_bytes) as a JSON string, without the copy when
  // the text is ASCII (most log lines).
  void WireString(std::string_view text, std::size_t max_bytes) {
    if (IsAscii(text)) {
      String(text.substr(0, max_bytes));
    } else {
      String(WireMessage(text, max_bytes));
    }
  }
  template <class Integer>
  void Number(Integer value) {
    constexpr std::size_t kDigits = 24;  // any 64-bit integer, sign included
    Room(kDigits);
    p_ = std::to_chars(p_, p_ + kDigits, value).ptr;
  }
  // A time's and a duration's text are digits and letters: quoted, nothing
  // to escape.
  void Time(std::chrono::system_clock::time_point t) {
    Room(kRfc3339Bound + 2);
    *p_++ = '"';
    p_ = WriteRfc3339(p_, t);
    *p_++ = '"';
  }
  void Duration(std::chrono::milliseconds d) {
    Room(kDurationBound + 2);
    *p_++ = '"';
    p_ = WriteDuration(p_, d);
    *p_++ = '"';
  }
  // A std::map<std::string, std::string> or a span of StringViewPair: the
  // pairs in key order.
  template <class Map>
  void StringMap(const Map& map) {
    Put('{');
    bool first = true;
    for (const auto& [key, value] : map) {
      if (!first) Put(',');
      first = false;
      String(key);
      Put(':');
      String(value);
    }
    Put('}');
  }
  // StringMap's bytes, each `"key":"value"` taken from `memo` (the pair at
  // the same place in an earlier map) when its key and value are the same:
  // a scan's labels are its file, the same for every event, and its line.
  template <class PairMemo>
  void StringMap(std::span<const StringViewPair> map, std::span<PairMemo> memo) {
    Put('{');
    for (std::size_t i = 0; i < map.size(); ++i) {
      if (i > 0) Put(',');
      const auto& [key, value] = map[i];
      if (i >= memo.size()) {
        String(key);
        Put(':');
        String(value);
        continue;
      }
      PairMemo& m = memo[i];
      const bool hit = m.valid && SameText(m.key, key) && SameText(m.value, value);
      // A value that changed twice running (a scan's line number) changes
      // with every event: written directly, not kept.
      if (!hit && m.missed) {
        String(key);
        Put(':');
        String(value);
        continue;
      }
      m.missed = !hit;
      if (!hit) {
        m.key.assign(key);
        m.value.assign(value);
        m.json.clear();
        EventText pair(m.json);
        pair.String(key);
        pair.Put(':');
        pair.String(value);
        m.valid = true;
      }
      Put(m.json);
    }
    Put('}');
  }
  void StringList(std::span<const std::string> list) {
    Put('[');
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0) Put(',');
      String(list[i]);
    }
    Put(']');
  }

 private:
  // A message's JSON fits (2,048 bytes at 6 bytes each at most, plus the
  // quotes); a longer string is appended to `out` directly.
  static constexpr std::size_t kSize = 16384;

  // True when `n` bytes fit from p_ (flushing first if they fit only in an
  // empty buffer); false when they never will: the caller writes to out_.
  bool Fits(std::size_t n) {
    if (static_cast<std::size_t>(buffer_.data() + kSize - p_) >= n) return true;
    Flush();
    return n <= kSize;
  }
  // Room for a piece of at most a few dozen bytes.
  void Room(std::size_t n) {
    if (static_cast<std::size_t>(buffer_.data() + kSize - p_) < n) Flush();
  }
  void Flush() {
    // (pointer, size): append(first, last) goes through _M_replace, ~170
    // instructions an event more (callgrind, user-gpu's 10% corpus).
    out_.append(buffer_.data(), static_cast<std::size_t>(p_ - buffer_.data()));
    p_ = buffer_.data();
  }

  std::string& out_;
  std::array<char, kSize> buffer_;  // written before read: not cleared
  char* p_ = buffer_.data();
};

// Writes the member `m` (key and value) if the event has it. `Event` is
// FaultEvent or FaultEventView: the members it reads have the same names and
// meaning in both, so the two cannot be written differently.
template <class Event>
void WriteMember(EventText& out, const Event& e, Member m, bool& first) {
  const auto string_member = [&](std::string_view quoted_key, std::string_view value) {
    out.Key(quoted_key, first);
    out.String(value);
  };
  switch (m) {
    case Member::kAction:
      out.Key(",\"action\":", first);
      return out.Name(ActionName(e.action));
    case Member::kBootId:
      return string_member(",\"boot_id\":", e.boot_id);
    case Member::kCategory:
      return string_member(",\"category\":", e.category);
    case Member::kClears:
      if (e.clears.empty()) return;
      out.Key(",\"clears\":", first);
      return out.StringList(e.clears);
    case Member::kCondition:
      if (!e.condition.empty()) string_member(",\"condition\":", e.condition);
      return;
    case Member::kDetectedTime:
      out.Key(",\"detected_time\":", first);
      return out.Time(e.detected_time);
    case Member::kEvidence: {
      if (e.evidence.empty()) return;
      out.Key(",\"evidence\":", first);
      out.Put('[');
      for (std::size_t i = 0; i < e.evidence.size(); ++i) {
        if (i > 0) out.Put(',');
        out.WireString(e.evidence[i], FaultEvent::kMaxEvidenceLineBytes);
      }
      out.Put(']');
      return;
    }
    case Member::kExpire:
      if (!e.expire) return;
      out.Key(",\"expire\":", first);
      return out.Duration(*e.expire);
    case Member::kFields:
      out.Key(",\"fields\":", first);
      return out.StringMap(e.fields);
    case Member::kId:
      return string_member(",\"id\":", e.id);
    case Member::kLabels:
      out.Key(",\"labels\":", first);
      return out.StringMap(e.labels);
    case Member::kLogTime:
      out.Key(",\"log_time\":", first);
      return out.Time(e.log_time);
    case Member::kMessage:
      out.Key(",\"message\":", first);
      return out.WireString(e.message, FaultEvent::kMaxMessageBytes);
    case Member::kNode:
      return string_member(",\"node\":", e.node);
    case Member::kOrigin:
      out.Key(",\"origin\":", first);
      return out.Name(OriginName(e.origin));
    case Member::kPack:
      return string_member(",\"pack\":", e.pack);
    case Member::kPeer:
      if (!e.peer.empty()) string_member(",\"peer\":", e.peer);
      return;
    case Member::kProbation:
      if (!e.probation) return;
      out.Key(",\"probation\":", first);
      return out.Duration(*e.probation);
    case Member::kRecover:
      if (!e.recover.empty()) string_member(",\"recover\":", e.recover);
      return;
    case Member::kRule:
      return string_member(",\"rule\":", e.rule);
    case Member::kSchema:
      // One digit, written as one: to_chars cost ~100 instructions an event.
      static_assert(FaultEvent::kSchemaVersion >= 0 && FaultEvent::kSchemaVersion <= 9);
      out.Key(",\"schema\":", first);
      return out.Put(static_cast<char>('0' + FaultEvent::kSchemaVersion));
    case Member::kSeverity:
      out.Key(",\"severity\":", first);
      return out.Name(SeverityName(e.severity));
    case Member::kSource:
      return string_member(",\"source\":", e.source);
    case Member::kSummary:
      return string_member(",\"summary\":", e.summary);
    case Member::kSuppressed:
      out.Key(",\"suppressed\":", first);
      return out.Number(e.suppressed);
    case Member::kThreshold: {
      if (!e.threshold) return;
      out.Key(",\"threshold\":", first);
      out.Put("{\"count\":");
      out.Number(std::int64_t{e.threshold->count});
      out.Put(",\"key\":");
      out.StringList(e.threshold->key);
      out.Put(",\"window\":");
      out.Duration(e.threshold->window);
      out.Put('}');
      return;
    }
  }
}

// The members an EventTextMemo keeps, where they are in kSchemaOrder: the
// run from node to action is written as one piece, so it must be one run
// there.
constexpr Member kRuleRun[] = {Member::kNode,     Member::kBootId,   Member::kSource,
                               Member::kOrigin,   Member::kRule,     Member::kPack,
                               Member::kCategory, Member::kSeverity, Member::kAction};
constexpr std::size_t kRuleRunAt = 2;  // after schema and id
constexpr bool SchemaOrderHasMemoRuns() {
  for (std::size_t i = 0; i < std::size(kRuleRun); ++i) {
    if (kSchemaOrder[kRuleRunAt + i] != kRuleRun[i]) return false;
  }
  constexpr std::size_t after = kRuleRunAt + std::size(kRuleRun);
  return kSchemaOrder[0] == Member::kSchema && kSchemaOrder[1] == Member::kId &&
         kSchemaOrder[after] == Member::kSummary && kSchemaOrder[after + 1] == Member::kFields &&
         kSchemaOrder[after + 2] == Member::kMessage &&
         kSchemaOrder[after + 3] == Member::kLogTime &&
         kSchemaOrder[after + 4] == Member::kDetectedTime &&
         kSchemaOrder[after + 5] == Member::kLabels;
}
static_assert(SchemaOrderHasMemoRuns(), "EventTextMemo's runs must follow kSchemaOrder");
constexpr std::size_t kAfterMemoRuns = kRuleRunAt + std::size(kRuleRun) + 6;

// The members after the memo's runs: `suppressed`, then the optional ones,
// the last of kSchemaOrder, which most events of a scan lack.
constexpr Member kOptionalTail[] = {Member::kThreshold, Member::kExpire,   Member::kClears,
                                    Member::kCondition, Member::kEvidence, Member::kPeer,
                                    Member::kProbation, Member::kRecover};
constexpr bool SchemaOrderEndsWithOptionalTail() {
  if (std::size(kSchemaOrder) != kAfterMemoRuns + 1 + std::size(kOptionalTail)) return false;
  if (kSchemaOrder[kAfterMemoRuns] != Member::kSuppressed) return false;
  for (std::size_t i = 0; i < std::size(kOptionalTail); ++i) {
    if (kSchemaOrder[kAfterMemoRuns + 1 + i] != kOptionalTail[i]) return false;
  }
  return true;
}
static_assert(SchemaOrderEndsWithOptionalTail(), "kOptionalTail must end kSchemaOrder");

// Whether WriteMember writes any of kOptionalTail for `e`: its conditions,
// asked at once. Asking WriteMember's switch for each of the 8 cost ~300
// instructions an event that has none (callgrind, user-gpu's 10% corpus).
bool HasOptionalTail(const FaultEventView& e) {
  return e.threshold != nullptr || e.expire || !e.clears.empty() || !e.condition.empty() ||
         !e.evidence.empty() || !e.peer.empty() || e.probation || !e.recover.empty();
}

template <class Event>
void AppendMembers(std::string& text, const Event& event, EventKeyOrder order, bool first) {
  EventText out(text);
  if (order == EventKeyOrder::kSorted) {
    for (Member m : kSortedOrder) WriteMember(out, event, m, first);
  } else {
    for (Member m : kSchemaOrder) WriteMember(out, event, m, first);
  }
}

}  // namespace

struct EventTextMemo::State {
  // One rule's members from node to action, and its summary, as JSON text
  // (each with a comma before it), with the values it was written from.
  struct RuleRun {
    const char* at = nullptr;  // FindSlot's: the rule id it was found for
    std::size_t size = 0;
    bool valid = false;
    std::string node, boot_id, source, rule, pack, category;
    Origin origin = Origin::kAny;
    Severity severity = Severity::kWarning;
    Action action = Action::kEvent;
    std::string json;
    bool summary_valid = false;
    bool summary_missed = false;  // as PairText's missed
    std::string summary;
    std::string summary_json;
    // The optional members that end the event (kOptionalTail), but for
    // `evidence` (an event with evidence writes them directly), with the
    // values they were written from: a rule's threshold, condition and
    // recovery are the same match after match.
    bool tail_valid = false;
    bool tail_missed = false;  // as PairText's missed
    std::optional<EventThreshold> threshold;
    std::optional<std::chrono::seconds> expire, probation;
    std::vector<std::string> clears;
    std::string condition, peer, recover;
    std::string tail_json;
  };
  // A time member's text, with the time it was written from.
  struct TimeText {
    bool valid = false;
    std::chrono::system_clock::time_point time;
    std::string json;
  };
  // A string map's `"key":"value"`, with the key and value.
  struct PairText {
    bool valid = false;
    bool missed = false;  // the last pair written here was not this one
    std::string key, value, json;
  };

  // Found by where the rule id's bytes are (FindSlot).
  static constexpr std::size_t kRuns = 64;
  std::array<RuleRun, kRuns> runs;
  TimeText log_time, detected_time;
  std::array<PairText, 4> labels;

  RuleRun& RunOf(std::string_view rule) { return FindSlot(runs, rule); }
};

EventTextMemo::EventTextMemo() : state_(std::make_unique<State>()) {}
EventTextMemo::~EventTextMemo() = default;

namespace {

bool SameRun(const EventTextMemo::State::RuleRun& run, const FaultEventView& e) {
  return run.valid && SameText(run.rule, e.rule) && run.origin == e.origin &&
         run.severity == e.severity && run.action == e.action &&
         SameText(run.category, e.category) && SameText(run.pack, e.pack) &&
         SameText(run.node, e.node) && SameText(run.source, e.source) &&
         SameText(run.boot_id, e.boot_id);
}

// Writes the members of `e` into `json` (cleared first), in that order, as
// they appear after another member.
void RenderMembers(std::string& json, const FaultEventView& e, std::span<const Member> members) {
  json.clear();
  EventText text(json);
  bool first = false;
  for (Member m : members) WriteMember(text, e, m, first);
}

void RenderMember(std::string& json, const FaultEventView& e, Member m) {
  RenderMembers(json, e, std::span<const Member>(&m, 1));
}

void PutTime(EventText& out, EventTextMemo::State::TimeText& memo, const FaultEventView& e,
             Member m, std::chrono::system_clock::time_point t) {
  if (!memo.valid || memo.time != t) {
    RenderMember(memo.json, e, m);
    memo.time = t;
    memo.valid = true;
  }
  out.Put(memo.json);
}

bool SameTail(const EventTextMemo::State::RuleRun& run, const FaultEventView& e) {
  const bool same_threshold =
      e.threshold == nullptr ? !run.threshold : run.threshold && *run.threshold == *e.threshold;
  return run.tail_valid && same_threshold && run.expire == e.expire &&
         run.probation == e.probation && SameText(run.condition, e.condition) &&
         SameText(run.peer, e.peer) && SameText(run.recover, e.recover) &&
         std::equal(run.clears.begin(), run.clears.end(), e.clears.begin(), e.clears.end());
}

// kOptionalTail's members of `e`, from the rule run's memo when the values
// are those it was written from: a threshold's key list and window, a
// condition, through WriteMember's switch one by one, were ~470
// instructions an event on subset-a's 10% corpus.
[[gnu::noinline]] void PutOptionalTail(EventText& out, EventTextMemo::State::RuleRun& run,
                                       const FaultEventView& e, bool& first) {
  const bool hit = e.evidence.empty() && SameTail(run, e);
  // Evidence (never in a scan) is written directly, and so is a tail that
  // changed twice running (a `peer` capture's).
  if (!e.evidence.empty() || (!hit && run.tail_missed)) {
    for (Member m : kOptionalTail) WriteMember(out, e, m, first);
    return;
  }
  run.tail_missed = !hit;
  if (!hit) {
    run.threshold.reset();
    if (e.threshold != nullptr) run.threshold = *e.threshold;
    run.expire = e.expire;
    run.probation = e.probation;
    run.clears.assign(e.clears.begin(), e.clears.end());
    run.condition.assign(e.condition);
    run.peer.assign(e.peer);
    run.recover.assign(e.recover);
    RenderMembers(run.tail_json, e, kOptionalTail);
    run.tail_valid = true;
  }
  out.Put(run.tail_json);
}

// AppendMembers(kSchema) with the memo's runs: AppendFaultEventMembers
// took 55.4 M instructions without them, 30.0 M with them, on an 8 MB slice
// of user-gpu's 10% corpus (11,064 events; bench/README.md).
void AppendSchemaMembers(std::string& text, const FaultEventView& e, EventTextMemo::State& memo,
                         bool first) {
  // `schema` and a scan's `suppressed` (0) are the same for every event:
  // WriteMember's text, rendered once (through WriteMember and its switch,
  // ~80 instructions an event each).
  static const std::string schema_text = [] {
    std::string json;
    RenderMember(json, FaultEventView(), Member::kSchema);
    return json;
  }();
  static const std::string unsuppressed_text = [] {
    std::string json;
    RenderMember(json, FaultEventView(), Member::kSuppressed);  // suppressed 0
    return json;
  }();
  EventText out(text);
  out.Put(first ? std::string_view(schema_text).substr(1) : std::string_view(schema_text));
  first = false;
  WriteMember(out, e, Member::kId, first);
  EventTextMemo::State::RuleRun& run = memo.RunOf(e.rule);
  if (!SameRun(run, e)) {
    run.node.assign(e.node);
    run.boot_id.assign(e.boot_id);
    run.source.assign(e.source);
    run.rule.assign(e.rule);
    run.pack.assign(e.pack);
    run.category.assign(e.category);
    run.origin = e.origin;
    run.severity = e.severity;
    run.action = e.action;
    run.summary_valid = false;  // another rule's, maybe
    run.summary_missed = false;
    run.tail_valid = false;
    run.tail_missed = false;
    RenderMembers(run.json, e, kRuleRun);
    run.valid = true;
  }
  out.Put(run.json);
  // Apart: a summary with captures may differ from match to match; one
  // that changed twice running is written directly, not kept.
  const bool summary_hit = run.summary_valid && SameText(run.summary, e.summary);
  if (!summary_hit && run.summary_missed) {
    WriteMember(out, e, Member::kSummary, first);
  } else {
    if (!summary_hit) {
      run.summary.assign(e.summary);
      RenderMember(run.summary_json, e, Member::kSummary);
      run.summary_valid = true;
    }
    out.Put(run.summary_json);
  }
  run.summary_missed = !summary_hit;
  WriteMember(out, e, Member::kFields, first);
  WriteMember(out, e, Member::kMessage, first);
  PutTime(out, memo.log_time, e, Member::kLogTime, e.log_time);
  PutTime(out, memo.detected_time, e, Member::kDetectedTime, e.detected_time);
  out.Key(",\"labels\":", first);
  out.StringMap(e.labels, std::span<EventTextMemo::State::PairText>(memo.labels));
  if (e.suppressed == 0) {
    out.Put(unsuppressed_text);
  } else {
    WriteMember(out, e, Member::kSuppressed, first);
  }
  if (HasOptionalTail(e)) PutOptionalTail(out, run, e, first);
}

}  // namespace

void AppendFaultEventMembers(std::string& out, const FaultEventView& event, EventTextMemo& memo,
                             bool first) {
  AppendSchemaMembers(out, event, memo.state(), first);
}

void AppendFaultEventMembers(std::string& out, const FaultEvent& event, EventKeyOrder order,
                             bool first) {
  AppendMembers(out, event, order, first);
}

void AppendFaultEventMembers(std::string& out, const FaultEventView& event, EventKeyOrder order,
                             bool first) {
  AppendMembers(out, event, order, first);
}

std::string SerializeFaultEvent(const FaultEvent& event) {
  std::string out;
  out.reserve(512 + event.message.size() + event.summary.size());
  out.push_back('{');
  AppendFaultEventMembers(out, event, EventKeyOrder::kSorted, /*first=*/true);
  out.push_back('}');
  return out;
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
  std::optional<NlohmannView> find(event_reader::EventKey key) const { return find(key.name); }
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

Status ParseFaultEventInto(std::string_view json_text, FaultEvent& event, EventFields fields) {
  // The fast path reads nearly every event; what simdjson does not take
  // (not JSON, or JSON it reads differently) nlohmann reads, as it always did.
  if (std::optional<Status> fast = ParseFaultEventSimdjson(json_text, event, fields)) {
    return *std::move(fast);
  }
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("event is not valid JSON");
  try {
    return event_reader::ReadFaultEventInto(NlohmannView(j), event, fields);
  } catch (const nlohmann::json::exception& e) {
    // A number out of range for get<int>() and the like.
    return InvalidArgumentError(std::string("event is malformed: ") + e.what());
  }
}

Result<FaultEvent> ParseFaultEvent(std::string_view json_text, EventFields fields) {
  FaultEvent event;
  FL_RETURN_IF_ERROR(ParseFaultEventInto(json_text, event, fields));
  return event;
}

}  // namespace faultline
