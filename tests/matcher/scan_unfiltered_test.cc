// SPDX-License-Identifier: Apache-2.0
// `faultline scan` of a file large enough that rules without a prefilter
// literal (W202) are searched for per chunk (matcher/unfiltered_search.h):
// the events name the same lines and rules as plain RE2 over each message.
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "matcher/cli_commands.h"
#include "matcher/input_line.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

const std::vector<std::string> kLoose = {
    R"((?i)\b(?:hw|sw|fw)\s+\d{2,3}\s+(?:up|dn)\b)",
    R"(^[a-z]+: E\d{4} )",
    R"(\b[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d\b.*\b(?:dn|err)\b)",
};

std::string Pack() {
  std::string pack = "pack: loose\nversion: 1\nrules:\n";
  for (std::size_t i = 0; i < kLoose.size(); ++i) {
    pack += "  - id: loose" + std::to_string(i) +
            "\n    sources: [kernel, journal, pod]\n    pattern: '" + kLoose[i] + "'\n";
  }
  return pack;
}

std::string Log(std::size_t lines) {
  static const std::vector<std::string> kBodies = {"HW 118 dn",
                                                   "fw 7 up",
                                                   "sw 12 UP now",
                                                   "E1128 01:02:03.123456 2211 kubelet.go:1] x",
                                                   "mlx5_core 0000:3b:00.0: cmd failed, err(-22)",
                                                   "0000:3a:00.0 link up",
                                                   "nothing here",
                                                   "hwmon 123 up",
                                                   "port 4 dn"};
  static const std::vector<std::string> kPrefixes = {"",
                                                     "[ 12.345678] ",
                                                     "Nov 22 07:02:53 gpu-17 kernel: ",
                                                     "Nov 22 07:02:53 gpu-17 kubelet[2211]: ",
                                                     "Nov 22 07:02:53 gpu-17 kubelet: ",
                                                     "2026-11-22T07:02:53.1Z stdout F "};
  std::mt19937 rng(42);
  std::string out;
  for (std::size_t i = 0; i < lines; ++i) {
    out += kPrefixes[rng() % kPrefixes.size()] + kBodies[rng() % kBodies.size()] + "\n";
  }
  return out;
}

TEST_CASE("faultline scan finds W202 rules' lines in a large file as plain RE2 does") {
  TempDir dir;
  const std::string log = Log(40000);
  REQUIRE(log.size() > kLoose.size() * (std::size_t{256} << 10));  // the search's threshold
  std::set<std::pair<std::uint64_t, std::string>> want, got;
  std::uint64_t n = 0;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string text = ParseInputLine(line).text;
    for (std::size_t r = 0; r < kLoose.size(); ++r) {
      if (RE2::PartialMatch(text, RE2(kLoose[r]))) want.emplace(n, "loose" + std::to_string(r));
    }
  }
  std::ostringstream out, err;
  const int status = RunScanCommand(
      {"--no-builtin", "--rules", dir.Write("loose.yaml", Pack()), dir.Write("big.log", log)}, out,
      err);
  CHECK(status == 0);
  std::istringstream events(out.str());
  for (std::string line; std::getline(events, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    got.emplace(e.at("line").get<std::uint64_t>(), e.at("rule").get<std::string>());
  }
  CHECK(want.size() > 10000);
  CHECK(got == want);
}

}  // namespace
}  // namespace faultline
