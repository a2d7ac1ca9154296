// SPDX-License-Identifier: Apache-2.0
// faultline: match logs offline and check rule packs.
#include <iostream>
#include <string>
#include <vector>

#include "base/version.h"
#include "matcher/cli_commands.h"
#include "matcher/matcher_versions.h"

namespace {

constexpr const char* kUsage =
    R"(usage: faultline scan [--rules PATH]... [--no-builtin] [--source S] [--format json|text] [--node NAME] [FILE|-]...
       faultline rules check [PATH]... [--no-builtin] [--format json|text] [--werror]
       faultline rules list [PATH]... [--no-builtin] [--format text|json|ere]
       faultline --version

Run `faultline scan --help`, `faultline rules check --help` or
`faultline rules list --help` for details.
)";

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "scan") return faultline::RunScanCommand(args, std::cout, std::cerr);
  if (command == "rules") return faultline::RunRulesCommand(args, std::cout, std::cerr);
  if (command == "--version" || command == "version") {
    std::cout << faultline::VersionText("faultline", faultline::MatcherVersions());
    return 0;
  }
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "faultline: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
