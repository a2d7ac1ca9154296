// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "base/log_record.h"
#include "matcher/rule.h"

namespace faultline {

// Parses one YAML rule pack. Never throws: yaml-cpp's exceptions are caught
// and become diagnostics at the line and column yaml-cpp reports (1-based).
std::vector<Rule> LoadRulePack(std::string_view yaml_text, std::string_view file_name,
                               Diagnostics& diags);

// The packs compiled into the binary from rules/*.yaml: (file name, text),
// and each parsed at build time (matcher/rule_snapshot.h; empty: parse the
// text).
struct RulePackText {
  std::string file;  // "rules/nvidia-xid.yaml"
  std::string text;
  std::string_view snapshot;  // static storage
};
const std::vector<RulePackText>& BuiltinRulePacks();

// Where rules come from: the built-in packs (unless off), then each path in
// order (a file, or a directory whose *.yaml / *.yml files are read in name
// order). A later pack may replace or disable an earlier rule by id only with
// `override: true`; any other repeated id is an error at both places. A file
// whose `pack:` name is that of a built-in pack replaces the built-in pack
// (an edited copy of a shipped pack).
struct RuleSources {
  bool builtin = true;
  std::vector<std::string> paths;
};

struct CompileOptions {
  // Rejects regexes whose RE2 program is larger than this, so that one rule
  // cannot make matching slow for all.
  int max_program_size = 5000;
  // RE2::Options::max_mem for each combined RE2::Set.
  std::int64_t max_memory_bytes = std::int64_t{64} << 20;
  // RE2::Options::max_mem for each rule's own RE2 (captures, and the
  // one-by-one fallback); 0: max_memory_bytes. It bounds that RE2's lazily
  // built DFA caches. A DFA that runs out of it makes RE2 fall back to its
  // NFA: the same matches, slower. The agent bounds it (its memory must not
  // grow with what it reads); `faultline scan` keeps the default.
  std::int64_t rule_max_memory_bytes = 0;
  // Off only for tests proving that results are identical without it.
  bool use_prefilter = true;
};

class RuleSet;

// Loads, merges and compiles. Returns nullptr if any error was reported
// (every problem is in `diags`); `texts` receives each file's content for
// Diagnostics::Print. Never throws.
std::shared_ptr<const RuleSet> LoadRules(const RuleSources& sources, const CompileOptions& options,
                                         Diagnostics& diags, SourceTexts& texts);

// An immutable, compiled set of rules.
//
// Thread-safety: Match() is const and may run on many threads at once. To
// change rules, compile a new RuleSet and swap the shared_ptr (see
// RuleSetHolder); readers keep the old one until they finish.
class RuleSet {
 public:
  // Reports every rule that does not compile to `diags`, at its location.
  // Returns nullptr if any rule failed. Never throws.
  static std::shared_ptr<const RuleSet> Compile(std::vector<Rule> rules,
                                                const CompileOptions& options, Diagnostics& diags);

  ~RuleSet();
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  // Appends to `out` each enabled rule that trusts `origin` (every rule when
  // origin is kAny) and matches `text`, with its outcome resolved. Rules with
  // action `ignore` are returned too; callers drop them. If an RE2::Set runs
  // out of memory, falls back to trying the rules one by one and counts it
  // in dfa_fallbacks(): never silently "no match".
  // Text alone: `journal:` constraints (rule.h) cannot be checked and are
  // not applied; for `faultline scan`, which reads logs offline and taints
  // nothing.
  void Match(std::string_view text, Origin origin, std::vector<RuleMatch>& out) const;
  // The same matches as Match(text, ...), found as a record's are: a text of
  // one line runs only its candidate rules (ForEachCandidate), a text of
  // several lines the Set. For one record at a time (the agent's, a scanned
  // CRI or journal JSON record); a buffer of lines is ForEachCandidate's.
  void MatchRecordText(std::string_view text, Origin origin, std::vector<RuleMatch>& out) const;
  // A record, as the agent matches it: a rule with a `journal:` constraint
  // matches a journal record only when the record's labels satisfy it (a
  // journal record without them, e.g. from a file source, does not). A
  // one-line record runs only its candidate rules (ForEachCandidate), so
  // the Set's DFA does not grow with every line read; the results are the
  // same.
  void Match(const LogRecord& record, std::vector<RuleMatch>& out) const;

  // Whole-buffer matching, for `faultline scan`. `buffer` holds lines
  // separated by '\n' (a last line without one counts; a '\r' before the
  // '\n' is kept). Calls `visit(line, line_no)` (line_no 1-based within
  // `buffer`, in increasing order) for every line that may match an enabled
  // rule trusting `origin`: with the prefilter on, only lines holding a
  // required literal of such a rule, plus those matched by the rules that
  // have no literal; with it off, every line. A superset: callers still
  // Match() each line.
  using LineVisitor = std::function<void(std::string_view line, std::uint64_t line_no)>;
  void ForEachCandidateLine(std::string_view buffer, Origin origin, const LineVisitor& visit) const;

  // ForEachCandidateLine that also names, per line, the rules that may match
  // it: `candidates` holds opaque rule handles (ascending = load order),
  // valid only during the call, for MatchCandidates. With the prefilter on
  // these are the rules whose literal is on the line plus those without a
  // literal that match it; with it off, every rule of `origin`.
  using CandidateVisitor = std::function<void(std::string_view line, std::uint64_t line_no,
                                              std::span<const std::uint32_t> candidates)>;
  void ForEachCandidate(std::string_view buffer, Origin origin,
                        const CandidateVisitor& visit) const;

  // Match() restricted to `candidates` from ForEachCandidate(buffer, o) with
  // o == origin or o == kAny, where `text` is the candidate line or its
  // message (a substring of it, `IDENT[pid]:` rewritten to `IDENT:`):
  // appends exactly what Match(text, origin, out) would, running only the
  // candidate rules' own regexes (a test proves it).
  void MatchCandidates(std::string_view text, Origin origin,
                       std::span<const std::uint32_t> candidates,
                       std::vector<RuleMatch>& out) const;

  // Match() on every line of `buffer`, through ForEachCandidateLine; calls
  // `on_match` for each line with at least one match. Results are identical
  // to calling Match() on each line (a test proves it).
  using MatchVisitor = std::function<void(std::string_view line, std::uint64_t line_no,
                                          std::vector<RuleMatch>& matches)>;
  void ScanBuffer(std::string_view buffer, Origin origin, const MatchVisitor& on_match) const;

  // The prefilter literals chosen for enabled rule `id` (empty: none, the
  // rule runs on every line), for `rules list` and W202.
  std::vector<std::string> PrefilterLiterals(std::string_view id) const;
  bool prefilter_active() const;

  // All rules, including disabled ones, in load order.
  const std::vector<Rule>& rules() const;
  std::size_t size() const;  // enabled rules
  std::uint64_t dfa_fallbacks() const;

  struct Impl;  // the RE2 and Vectorscan objects; keeps their headers out of this one
  friend struct RuleSetTesting;  // matcher/rule_set_testing.h

 private:
  explicit RuleSet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The RuleSet in force. A matcher takes a snapshot per batch; a reload swaps
// in a RuleSet that compiled without errors, so a broken rule pack never
// replaces a working one and a batch never sees two rule sets. Thread-safe.
class RuleSetHolder {
 public:
  explicit RuleSetHolder(std::shared_ptr<const RuleSet> initial) : current_(std::move(initial)) {}

  std::shared_ptr<const RuleSet> Get() const { return current_.load(); }
  void Replace(std::shared_ptr<const RuleSet> next) { current_.store(std::move(next)); }

 private:
  std::atomic<std::shared_ptr<const RuleSet>> current_;
};

// Builds the event for one match of `record`: id from (node, source, cursor,
// rule), message cut to FaultEvent::kMaxMessageBytes.
FaultEvent MakeFaultEvent(const RuleMatch& match, const LogRecord& record, std::string_view node,
                          std::string_view boot_id,
                          std::chrono::system_clock::time_point detected_time);
// MakeFaultEvent into an existing event: every member is set (nothing of
// what `event` held before is left), its buffers reused, for a caller
// that writes one event after another.
void FillFaultEvent(const RuleMatch& match, const LogRecord& record, std::string_view node,
                    std::string_view boot_id, std::chrono::system_clock::time_point detected_time,
                    FaultEvent& event);

// A record as views, for ViewFaultEvent: `labels` sorted by key, each key
// once.
struct RecordView {
  std::string_view source;
  Origin origin = Origin::kAny;
  std::string_view text;
  std::string_view cursor;
  std::chrono::system_clock::time_point time;
  std::span<const StringViewPair> labels;
  // How many of the cursor's first bytes every record of this scan shares
  // (a scan's "FILE:"): their hash is kept in EventViewBuffers::ids.
  std::size_t cursor_shared = 0;
};
// Storage a FaultEventView of ViewFaultEvent points into, reused from
// event to event.
struct EventViewBuffers {
  std::array<char, 32> id{};
  EventIdWriter ids;
  std::vector<StringViewPair> fields;
};
// The event FillFaultEvent would fill for the same match and record, as
// views into `match`, its rule, `record` and `buffers` (valid while they
// are): what `faultline scan` writes, without copying each string and map
// into a FaultEvent first.
FaultEventView ViewFaultEvent(const RuleMatch& match, const RecordView& record,
                              std::string_view node, std::string_view boot_id,
                              std::chrono::system_clock::time_point detected_time,
                              EventViewBuffers& buffers);

// Writes what the rule decided for `match` into `event`: pack, category,
// severity, action, summary, threshold, expire, condition and the peer its
// `peer:` capture names. The agent's MakeFaultEvent and the tainter's rule
// check (tainter/intake/rule_check.cc) both use it, so they cannot disagree.
void ApplyMatchOutcome(const RuleMatch& match, FaultEvent& event);
// The value of the rule's `peer:` capture in `match`; empty: none.
std::string PeerOf(const RuleMatch& match);

}  // namespace faultline
