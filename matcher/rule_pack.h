// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "matcher/rule.h"

namespace faultline {

// One parsed rule pack: what LoadRulePack() returns, plus the pack's own
// name and where it was written, for the duplicate-pack check (E103).
struct RulePack {
  std::string name;
  int version = 0;
  std::string description;
  SourceLocation name_at;
  std::vector<Rule> rules;
};

// Parses one YAML rule pack; every problem goes to `diags`. Rules that have
// errors are still returned where possible (so later checks see them), but a
// load with errors must not be compiled. Never throws.
RulePack ParseRulePack(std::string_view yaml_text, std::string_view file_name, Diagnostics& diags);

// The keys a rule may carry, for did-you-mean hints and docs.
const std::vector<std::string_view>& RuleKeys();

}  // namespace faultline
