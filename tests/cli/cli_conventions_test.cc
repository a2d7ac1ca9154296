// SPDX-License-Identifier: Apache-2.0
// --version, --help and usage errors of the built programs, run as processes.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

struct Run {
  int status = -1;
  std::string out, err;
};

// Runs `command` through sh, keeping stdout and stderr apart.
Run Exec(const std::string& command) {
  TempDir dir;
  const std::string out = dir / "out", err = dir / "err";
  Run r;
  const int status = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileForTest(out);
  r.err = ReadFileForTest(err);
  return r;
}

const std::string kFaultline = FL_BINARY_DIR "/matcher/faultline";
const std::string kAgent = FL_BINARY_DIR "/collector/faultline-agent";
const std::string kTainter = FL_BINARY_DIR "/tainter/faultline-tainter";
const std::string kPlugin = FL_BINARY_DIR "/tainter/kubectl-faultline";

// "NAME: VALUE" lines of a --version text, after its first line.
std::map<std::string, std::string> Fields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    auto colon = line.find(": ");
    if (colon != std::string::npos) fields[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return fields;
}

// What --version must show: the revision the build recorded (the build
// runs base/build_revision.cmake, which cli.build_revision_* tests against
// git), so a commit made after the build does not fail this test.
std::string ExpectedRevision() {
  const std::string text = ReadFileForTest(FL_BINARY_DIR "/base/build_revision.cc");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex(R"re(kBuildGitRevision\[\] = "([^"]*)")re")));
  return m[1];
}

// Each rules/*.yaml pack's `pack:` and `version:`, read from the files.
std::map<std::string, std::string> BuiltinPacks() {
  std::map<std::string, std::string> packs;
  for (const auto& entry : std::filesystem::directory_iterator(FL_SOURCE_DIR "/rules")) {
    if (entry.path().extension() != ".yaml") continue;
    std::string text = ReadFileForTest(entry.path().string()), name, version;
    std::smatch m;
    if (std::regex_search(text, m, std::regex(R"((^|\n)pack:\s*(\S+))"))) name = m[2];
    if (std::regex_search(text, m, std::regex(R"((^|\n)version:\s*(\S+))"))) version = m[2];
    packs[name] = version;
  }
  return packs;
}

void CheckVersion(const std::string& binary, const std::string& program, bool matcher, bool kafka) {
  CAPTURE(program);
  Run r = Exec(binary + " --version");
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const std::string first = r.out.substr(0, r.out.find('\n'));
  const std::string revision = ExpectedRevision();
  if (revision.empty()) {
    CHECK(first == program + " " FL_PROJECT_VERSION);
  } else {
    CHECK(first == program + " " FL_PROJECT_VERSION " (git " + revision + ")");
  }
  std::map<std::string, std::string> fields = Fields(r.out);
  if (matcher) {
    CHECK(std::regex_match(fields["re2"], std::regex(R"(\d{8}.*)")));  // RE2 versions are dates
    CHECK(std::regex_match(fields["vectorscan"], std::regex(R"(\d+\.\d+\.\d+)")));
    std::map<std::string, std::string> packs = BuiltinPacks();
    CHECK(packs.size() >= 5);
    // Not a structured binding: doctest's CAPTURE is a lambda, and clang 14 cannot
    // capture a structured binding.
    for (const auto& pack : packs) {
      const std::string& name = pack.first;
      CAPTURE(name);
      CHECK(fields["rule pack " + name] == pack.second);
    }
  } else {
    CHECK(fields.count("re2") == 0);
    CHECK(fields.count("vectorscan") == 0);
  }
  if (kafka) {
    CHECK(std::regex_match(fields["librdkafka"], std::regex(R"(\d+\.\d+\.\d+.*)")));
  } else {
    CHECK(fields.count("librdkafka") == 0);
  }
}

TEST_CASE("--version names the project version, the git revision, the libraries and the packs") {
  CheckVersion(kFaultline, "faultline", /*matcher=*/true, /*kafka=*/false);
  CheckVersion(kAgent, "faultline-agent", /*matcher=*/true, /*kafka=*/true);
  // The tainter checks every event against the rule packs: it lists them.
  CheckVersion(kTainter, "faultline-tainter", /*matcher=*/true, /*kafka=*/true);
  CheckVersion(kPlugin, "kubectl-faultline", /*matcher=*/false, /*kafka=*/true);
  CHECK(std::regex_search(Exec(kTainter + " --version").out,
                          std::regex(R"(\nlibcurl: \d+\.\d+\.\d+)")));
}

TEST_CASE("-h and --help on every subcommand print help on stdout and exit 0") {
  const std::vector<std::pair<std::string, std::string>> commands = {
      {kFaultline + " --help", "faultline scan"},
      {kFaultline + " -h", "faultline rules check"},
      {kFaultline + " scan --help", "--fail-on"},
      {kFaultline + " scan -h", "--fail-on"},
      {kFaultline + " rules check --help", "--werror"},
      {kFaultline + " rules list --help", "--format text|json|ere"},
      {kFaultline + " rules list -h", "--format text|json|ere"},
      {kAgent + " --help", "--print-default-config"},
      {kAgent + " -h", "Exit status"},
      {kAgent + " --standalone --help", "--demo"},
      {kAgent + " --standalone -h", "--dry-run"},
      {kTainter + " --help", "--log-level"},
      {kTainter + " -h", "Exit status"},
      {kTainter + " nodes --help", "usage: faultline-tainter nodes"},
      {kTainter + " nodes -h", "get/list on nodes"},
      {kTainter + " untaint --help", "usage: faultline-tainter untaint NODE"},
      {kTainter + " untaint gpu-1 -h", "--reason"},
      {kTainter + " explain --help", "usage: faultline-tainter explain NODE"},
      {kTainter + " incidents --help", "usage: faultline-tainter incidents --config FILE"},
      {kPlugin + " --help", "usage: kubectl faultline nodes"},
      {kPlugin + " -h", "explain NODE"},
      {kPlugin + " nodes --help", "usage: kubectl faultline nodes"},
      {kPlugin + " explain -h", "what would\nlift the taint"},
      {kPlugin + " explain gpu-1 --help", "Needs only get on\nnodes"},
      {kPlugin + " untaint --help", "usage: kubectl faultline untaint NODE"},
  };
  for (const auto& entry : commands) {
    const std::string& command = entry.first;
    CAPTURE(command);
    Run r = Exec(command);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.rfind("usage: ", 0) == 0);
    CHECK(r.out.find(entry.second) != std::string::npos);
  }
}

TEST_CASE("a usage error goes to stderr with the usage and exit status 2") {
  const std::vector<std::string> commands = {
      kFaultline,
      kFaultline + " frobnicate",
      kFaultline + " scan --bogus",
      kFaultline + " scan --format xml",
      kFaultline + " rules",
      kFaultline + " rules check --bogus",
      kFaultline + " rules list --format yaml",
      kAgent,
      kAgent + " --bogus",
      kAgent + " --standalone --bogus",
      kTainter,
      kTainter + " --bogus",
      kTainter + " nodes --bogus",
      kTainter + " untaint",
      kTainter + " nodes --reason x",
      kTainter + " explain",
      kTainter + " incidents",
      kTainter + " incidents --since",
      kTainter + " incidents --config x.yaml --since soon",
      kPlugin,
      kPlugin + " frobnicate",
      kPlugin + " explain",
      kPlugin + " explain gpu-1 gpu-2",
      kPlugin + " nodes --reason x",
      kPlugin + " untaint --kubeconfig",
  };
  for (const std::string& command : commands) {
    CAPTURE(command);
    Run r = Exec(command);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(!r.err.empty());
  }
}

}  // namespace
}  // namespace faultline
