// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "base/fault_event.h"
#include "base/vocabulary.h"

namespace faultline {

struct Classification;

// What a match means. A rule has one; a `classify:` table entry overrides
// any part of it for one value of a capture (the Xid code).
struct Outcome {
  std::optional<std::string> category;
  std::optional<Severity> severity;
  std::optional<Action> action;
  std::optional<std::string> summary;  // may interpolate captures: "Xid {xid} on {pci}"
  std::optional<EventThreshold> threshold;
  std::optional<std::chrono::seconds> expire;
  std::optional<std::string> condition;  // NodeCondition type, e.g. GPUInterconnectFault
  // `recover: reboot` for this outcome only (one Xid code, not the whole rule).
  std::optional<std::string> recover;
  // A nested `classify:` (one level below a rule's own), applied after this
  // outcome. Shared and immutable once loaded.
  std::shared_ptr<const Classification> classify;
};

// Classification by a capture's value: `table` maps a value to its outcome,
// `fallback` applies to values not in the table (unknown future Xid codes).
struct Classification {
  std::string capture;
  std::map<std::string, Outcome> table;
  Outcome fallback;
  SourceLocation at;
};

// `journal:` in a rule: which writers of a journal record the rule trusts.
// journald adds _SYSTEMD_UNIT and _UID itself (a client cannot set them), so
// they tell a record of nvidia-fabricmanager.service, or of root, from the
// same text sent with `logger` by any local user. Applies to records of
// origin journal (labels `unit`, `uid`); records of other origins are not
// concerned. A record without the label does not pass.
struct JournalConstraint {
  std::vector<std::string> units;  // _SYSTEMD_UNIT values; empty: any unit
  std::vector<std::string> uids;   // _UID values, decimal; empty: any user
  bool Allows(const Labels& labels) const;
};

// One embedded rule test: a line that must (or must not) match, and for
// `match:` tests the captures expected.
struct RuleTest {
  std::string line;
  std::map<std::string, std::string> fields;  // expected captures (match tests only)
  std::optional<Origin> origin;               // default: the rule's first source
  Labels labels;                              // the record's labels (journal: unit, uid)
  // Expected resolved outcome, optional: `action: taint` in a test checks
  // the classification too.
  std::optional<Action> action;
  std::optional<Severity> severity;
  SourceLocation at;
};

// One rule as written in a rule pack, with the pack defaults applied.
struct Rule {
  std::string id;  // unique across all loaded packs; the reason shown on the node
  std::string pack;
  std::string description;
  std::vector<Origin> sources;  // the origins it trusts; never empty after loading
  std::string pattern;          // RE2 syntax, unanchored, named captures (?P<name>...)
  std::string category;
  Severity severity = Severity::kWarning;
  Action action = Action::kEvent;
  std::string summary;  // may interpolate captures
  std::optional<EventThreshold> threshold;
  std::optional<std::chrono::seconds> expire;
  std::string condition;  // NodeCondition type; empty: mapped from the category by the tainter
  std::optional<Classification> classify;
  std::optional<JournalConstraint> journal;  // absent: any journal record
  // `peer: CAPTURE`: the capture names the remote end the line blames (an
  // address or IB GID); its value travels as the event's `peer`, and the
  // tainter attributes the fault to the node at that address once enough
  // distinct nodes name it. Empty: the line blames its own node.
  std::string peer;
  // How the fault ends besides `expire` and a person (tainter/core/recovery.h):
  // `recover: reboot` lifts the reason once the node's boot id changed and
  // the node stayed quiet for `probation` (absent: the tainter's default).
  std::string recover;
  std::optional<std::chrono::seconds> probation;
  // `clear: [rule ids]`: this rule matches a recovery line; its match lifts
  // the named rules' reasons on the node (never a recurring one).
  std::vector<std::string> clears;
  std::vector<RuleTest> match_tests;
  std::vector<RuleTest> no_match_tests;
  bool disabled = false;      // `disabled: true` in an override: loaded, never matched
  bool is_override = false;   // `override: true`: replaces the earlier rule with this id
  SourceLocation defined_at;  // the `- id:` line
  SourceLocation pattern_at;  // the pattern scalar, for regex errors
  // Each key written for this rule in its pack (not filled in from
  // `defaults:`), with the location of its value: what an override replaces,
  // and where E105 points for `threshold`, `summary`, ...
  std::map<std::string, SourceLocation> keys_at;
  // The pattern and all that is checked against its captures (summary,
  // threshold key, classify, peer, test fields) are a built-in pack's own,
  // unchanged by any override. The tests compile every built-in rule without
  // a diagnostic at the default limits (tests/matcher/builtin_packs_test.cc,
  // disabled_rule_check_test.cc), so a disabled rule so marked needs no RE2
  // compile at load: 132 compiles, 37 M instructions, when an override pack
  // disables most built-in rules. Set by LoadRules; MergeRulePacks clears it
  // for an override that writes more than `disabled` and `description`.
  bool checked_at_build = false;
};

// One match of one rule on one line, with the outcome resolved (the
// classification applied, the summary interpolated).
struct RuleMatch {
  const Rule* rule = nullptr;                 // owned by the RuleSet; valid while it lives
  std::map<std::string, std::string> fields;  // named captures that took part in the match
  std::string category;
  Severity severity = Severity::kWarning;
  Action action = Action::kEvent;
  std::string summary;
  std::optional<EventThreshold> threshold;
  std::optional<std::chrono::seconds> expire;
  std::string condition;
  std::string recover;  // the rule's `recover:`, or its classify outcome's
};

}  // namespace faultline
