// SPDX-License-Identifier: Apache-2.0
#include "tainter/intake/rule_check.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "base/time_format.h"
#include "matcher/classify.h"

namespace faultline {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string ThresholdText(const std::optional<EventThreshold>& t) {
  if (!t) return "none";
  std::string key;
  for (const std::string& k : t->key) key += (key.empty() ? "" : ",") + k;
  return std::to_string(t->count) + " in " + FormatDuration(t->window) +
         (key.empty() ? "" : " by " + key);
}

std::string ExpireText(const std::optional<std::chrono::seconds>& e) {
  return e ? FormatDuration(*e) : "never";
}

// The first claim of `event` that the rule's outcome `m` contradicts, as
// "action 'taint' but rule 'x' says 'event'"; empty when none does.
std::string FirstDifference(const FaultEvent& event, const RuleMatch& m) {
  const std::string& id = m.rule->id;
  auto differs = [&id](std::string_view what, std::string_view claimed, std::string_view rule) {
    return std::string(what) + " " + Quote(claimed) + " but rule " + Quote(id) + " says " +
           Quote(rule);
  };
  if (event.action != m.action) {
    return differs("action", ActionName(event.action), ActionName(m.action));
  }
  if (event.severity != m.severity) {
    return differs("severity", SeverityName(event.severity), SeverityName(m.severity));
  }
  if (event.expire != m.expire) {
    return differs("expire", ExpireText(event.expire), ExpireText(m.expire));
  }
  if (event.threshold != m.threshold) {
    return differs("threshold", ThresholdText(event.threshold), ThresholdText(m.threshold));
  }
  if (event.category != m.category) return differs("category", event.category, m.category);
  if (event.condition != m.condition) return differs("condition", event.condition, m.condition);
  if (const std::string peer = PeerOf(m); event.peer != peer) {
    return differs("peer", event.peer, peer);
  }
  // Return to service (tainter/core/recovery.h): a forged `clears` must not lift
  // another rule's taint, nor a forged `recover` make a fault end by reboot.
  if (event.recover != m.recover) return differs("recover", event.recover, m.recover);
  if (event.probation != m.rule->probation) {
    return differs("probation", ExpireText(event.probation), ExpireText(m.rule->probation));
  }
  if (event.clears != m.rule->clears) {
    auto join = [](const std::vector<std::string>& ids) {
      std::string out;
      for (const std::string& cleared : ids) out += (out.empty() ? "" : ",") + cleared;
      return out;
    };
    return differs("clear", join(event.clears), join(m.rule->clears));
  }
  return {};
}

}  // namespace

std::string RulePackFingerprint(const RuleSources& sources) {
  std::vector<std::string> files;
  for (const std::string& path : sources.paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (ext == ".yaml" || ext == ".yml") files.push_back(entry.path().string());
      }
    } else {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const std::string& file : files) {
    struct stat st {};
    out += file;
    if (stat(file.c_str(), &st) == 0) {
      out += ' ' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
             std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
    }
    out += '\n';
  }
  return out;
}

std::shared_ptr<const RuleSet> LoadRulePacks(const RuleSources& sources, std::ostream& err) {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> rules = LoadRules(sources, {}, diags, texts);
  diags.Print(err, texts);  // warnings too, as the agent prints them
  return rules;
}

RuleCheck::RuleCheck(std::shared_ptr<const RuleSet> rules, OnMismatch on_mismatch)
    : on_mismatch_(on_mismatch) {
  Replace(std::move(rules));
}

void RuleCheck::Replace(std::shared_ptr<const RuleSet> rules) {
  rules_ = std::move(rules);
  by_id_.clear();
  for (const Rule& rule : rules_->rules()) {
    // A disabled rule never matches on an agent with the same packs: an
    // event naming it did not come from one.
    if (!rule.disabled) by_id_[rule.id] = &rule;
  }
}

RuleCheck::Verdict RuleCheck::Check(FaultEvent& event) const {
  auto it = by_id_.find(event.rule);
  if (it == by_id_.end()) {
    return {"unknown_rule", "rule " + Quote(event.rule) + " is not in the tainter's rule packs"};
  }
  const Rule& rule = *it->second;
  // The agent matches a rule only on records of the origins it trusts, and
  // a journal record only when its unit and uid pass the rule's `journal:`
  // (journald sets those labels; a client cannot).
  if (std::find(rule.sources.begin(), rule.sources.end(), event.origin) == rule.sources.end()) {
    return {"rule_mismatch",
            "origin " + Quote(OriginName(event.origin)) + " but rule " + Quote(rule.id) +
                " does not trust it",
            true};
  }
  if (event.origin == Origin::kJournal && rule.journal && !rule.journal->Allows(event.labels)) {
    return {"rule_mismatch",
            "journal unit/uid labels that rule " + Quote(rule.id) +
                "'s journal: constraint does not allow",
            true};
  }
  RuleMatch m;
  m.rule = &rule;
  // The captures move into the match and back (no copy of the map per
  // event): nothing between reads event.fields.
  m.fields = std::move(event.fields);
  ResolveOutcome(rule, m);
  Verdict verdict;
  verdict.detail = FirstDifference(event, m);
  verdict.mismatch = !verdict.detail.empty();
  if (!verdict.mismatch || on_mismatch_ != OnMismatch::kSetAside) ApplyMatchOutcome(m, event);
  event.fields = std::move(m.fields);
  if (verdict.mismatch && on_mismatch_ == OnMismatch::kSetAside) {
    verdict.set_aside = "rule_mismatch";
  }
  return verdict;
}

}  // namespace faultline
