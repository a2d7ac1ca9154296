// SPDX-License-Identifier: Apache-2.0
#include "base/version.h"

#include "base/build_revision.h"

namespace faultline {

std::string_view ProjectVersion() { return kBuildProjectVersion; }

std::string_view GitRevision() { return kBuildGitRevision; }

std::string VersionText(std::string_view program, const std::vector<VersionComponent>& components) {
  std::string text(program);
  text += ' ';
  text += ProjectVersion();
  if (!GitRevision().empty()) {
    text += " (git ";
    text += GitRevision();
    text += ')';
  }
  text += '\n';
  for (const VersionComponent& c : components) {
    text += c.name + ": " + (c.version.empty() ? std::string("unknown") : c.version) + '\n';
  }
  return text;
}

}  // namespace faultline
