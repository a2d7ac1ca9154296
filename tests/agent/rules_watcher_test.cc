// SPDX-License-Identifier: Apache-2.0
// Rule reloads: a broken pack keeps the running rules; a ConfigMap-style
// symlink swap in a watched directory is picked up.
#include "collector/agent/rules_watcher.h"

#include <filesystem>

#include <doctest/doctest.h>

#include "tests/agent/agent_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOtherPack = R"(pack: other
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: test.ecc
    pattern: 'ECC error'
    severity: error
    action: event
)";

std::size_t Matches(const RuleSetHolder& holder, const std::string& line) {
  std::vector<RuleMatch> out;
  holder.Get()->Match(line, Origin::kKernel, out);
  return out.size();
}

TEST_CASE("a broken pack on reload leaves the old rules matching") {
  TempDir dir;
  dir.Write("rules/a.yaml", kTestPack);
  MetricsRegistry registry;
  AgentMetrics metrics(registry);
  RulesWatcher::Options options{{false, {dir / "rules"}}, {}, std::chrono::milliseconds(20)};
  RuleSetHolder holder(nullptr);
  RulesWatcher watcher(options, holder, metrics);
  REQUIRE(watcher.Reload("start").ok());
  const auto before = holder.Get();
  REQUIRE(Matches(holder, XidLine(1)) == 1);

  dir.Write("rules/a.yaml", "rules:\n  - id: x\n    pattern: 'a(b'\n");
  CHECK(watcher.Reload("SIGHUP").code() == StatusCode::kInvalidArgument);
  CHECK(holder.Get() == before);
  CHECK(Matches(holder, XidLine(1)) == 1);
  CHECK(metrics.reloads_failed.value() == 1);
  CHECK(metrics.reloads_ok.value() == 1);
}

TEST_CASE("a ConfigMap-style ..data symlink swap in a watched directory reloads the rules") {
  TempDir dir;
  // The kubelet's layout: files are symlinks into ..data, itself a symlink
  // to a timestamped directory; an update renames a new ..data over the old.
  dir.Write("cm/..v1/rules.yaml", kTestPack);
  fs::create_directory_symlink("..v1", dir.path() / "cm/..data");
  fs::create_symlink("..data/rules.yaml", dir.path() / "cm/rules.yaml");

  MetricsRegistry registry;
  AgentMetrics metrics(registry);
  RuleSetHolder holder(nullptr);
  RulesWatcher watcher({{false, {dir / "cm"}}, {}, std::chrono::milliseconds(20)}, holder, metrics);
  REQUIRE(watcher.Reload("start").ok());
  REQUIRE(watcher.Start().ok());
  CHECK(Matches(holder, "ECC error") == 0);

  dir.Write("cm/..v2/rules.yaml", kOtherPack);
  fs::create_directory_symlink("..v2", dir.path() / "cm/..data_tmp");
  fs::rename(dir.path() / "cm/..data_tmp", dir.path() / "cm/..data");

  REQUIRE(WaitUntil([&] { return metrics.reloads_ok.value() == 2; }));
  CHECK(Matches(holder, "ECC error") == 1);
  CHECK(Matches(holder, XidLine(1)) == 0);
  CHECK(metrics.rules_loaded.value() == 1);
}

}  // namespace
}  // namespace faultline
