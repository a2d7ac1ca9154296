// SPDX-License-Identifier: Apache-2.0
// What `--version` prints, the same way in every faultline program.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace faultline {

// One line under the program's name: "NAME: VERSION".
struct VersionComponent {
  std::string name;     // "re2", "vectorscan", "librdkafka", "rule pack nvidia-xid"
  std::string version;  // as the library or pack reports it
};

// The CMake project version, e.g. "0.1.0".
std::string_view ProjectVersion();
// The git revision the program was built from ("1a2b3c4d5e6f", with
// "-dirty" when the work tree had uncommitted changes), or "" when it was
// not built from a git checkout.
std::string_view GitRevision();

// The text `--version` prints:
//   PROGRAM 0.1.0 (git 1a2b3c4d5e6f)
//   re2: 20220601
//   ...
// `components` are what the program contains, in the order given.
std::string VersionText(std::string_view program, const std::vector<VersionComponent>& components);

}  // namespace faultline
