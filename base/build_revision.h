// SPDX-License-Identifier: Apache-2.0
// Defined in the build tree by base/build_revision.cmake, which rewrites the
// definition only when the revision changes: a new commit recompiles one
// file and relinks the programs, nothing else.
#pragma once

namespace faultline {

extern const char kBuildProjectVersion[];
extern const char kBuildGitRevision[];  // "" when not built from a git checkout

}  // namespace faultline
