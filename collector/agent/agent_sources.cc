// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_sources.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace faultline {
namespace {

template <typename T>
Status Add(Result<std::unique_ptr<T>> opened, std::string_view what,
           std::vector<std::unique_ptr<Source>>& out) {
  if (!opened) {
    return Status(opened.error().code(),
                  "source " + std::string(what) + ": " + opened.error().message());
  }
  out.push_back(std::move(*opened));
  return OkStatus();
}

}  // namespace

Result<std::vector<std::unique_ptr<Source>>> OpenSources(const AgentConfig& config,
                                                         const Clock& clock,
                                                         const RuleSetHolder* rules) {
  std::vector<std::unique_ptr<Source>> sources;
  if (config.kmsg_enabled) {
    FL_RETURN_IF_ERROR(Add(KmsgSource::Open(config.kmsg, clock), "kmsg", sources));
  }
  if (config.journal_enabled) {
    FL_RETURN_IF_ERROR(Add(JournalSource::Open(config.journal), "journal", sources));
  }
  if (config.podlog_enabled) {
    FL_RETURN_IF_ERROR(Add(PodLogSource::Open(config.podlog, clock), "podlog", sources));
  }
  if (config.ibcounters_enabled) {
    FL_RETURN_IF_ERROR(
        Add(IbCountersSource::Open(config.ibcounters, clock), "ibcounters", sources));
  }
  {
    // A failing finding holds back its round when the rules in force would
    // taint on it; an Event-only one (lifetime ECC, non-fatal AER) does not.
    std::function<bool(const LogRecord&)> holds;
    if (rules != nullptr) {
      holds = [rules](const LogRecord& record) {
        std::shared_ptr<const RuleSet> set = rules->Get();
        if (!set) return true;
        std::vector<RuleMatch> matches;
        set->Match(record, matches);
        if (matches.empty()) return true;  // no rule says what it means: it counts
        return std::any_of(matches.begin(), matches.end(),
                           [](const RuleMatch& m) { return m.action == Action::kTaint; });
      };
    }
    Result<std::unique_ptr<CheckSource>> checks =
        OpenCheckSource(config.checks, clock, std::move(holds));
    if (!checks.ok()) return Status(checks.error().code(), "checks: " + checks.error().message());
    if (*checks) sources.push_back(std::move(*checks));
  }
  for (const FileSourceConfig& file : config.files) {
    FileSource::Options options;
    options.path = file.path;
    options.follow = file.follow;
    options.origin = file.origin;
    options.state_dir = config.state_dir;
    // One checkpoint per path, so reordering the list keeps each file's place.
    options.checkpoint_name = "file";
    for (char ch : file.path) {
      options.checkpoint_name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    }
    FL_RETURN_IF_ERROR(Add(FileSource::Open(options, clock), "file " + file.path, sources));
  }
  return sources;
}

}  // namespace faultline
