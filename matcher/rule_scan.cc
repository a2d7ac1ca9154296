// SPDX-License-Identifier: Apache-2.0
#include "matcher/rule_set_impl.h"

namespace faultline {

void BuildPrefilter(RuleSet::Impl& impl, Diagnostics& diags) {
  (void)impl;
  (void)diags;
}

}  // namespace faultline
