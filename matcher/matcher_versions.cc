// SPDX-License-Identifier: Apache-2.0
#include "matcher/matcher_versions.h"

#include <string>

#include <hs/hs.h>

#include "matcher/rule_pack.h"
#include "matcher/rule_set.h"
#include "matcher/rule_snapshot.h"

// Debian's RE2 has no runtime version call and its pkg-config file says
// 0.0.0; matcher/CMakeLists.txt finds the version at configure time.
#ifndef FL_RE2_VERSION
#define FL_RE2_VERSION ""
#endif

namespace faultline {

std::vector<VersionComponent> MatcherVersions() {
  std::vector<VersionComponent> out;
  out.push_back({"re2", FL_RE2_VERSION});
  // hs_version(): "5.4.9 2023-01-01"; the date is the library's build date.
  std::string hs = hs_version();
  out.push_back({"vectorscan", hs.substr(0, hs.find(' '))});
  for (const RulePackText& text : BuiltinRulePacks()) {
    // Its diagnostics are ignored: the built-in packs are checked by the test suite.
    const ParsedPack parsed = ReadBuiltinPack(text);
    out.push_back({"rule pack " + parsed.pack.name, std::to_string(parsed.pack.version)});
  }
  return out;
}

}  // namespace faultline
