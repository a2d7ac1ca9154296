// SPDX-License-Identifier: Apache-2.0
// faultline-agent's one flag parser, both modes: what each accepts, what the
// first deciding flag is, and the text a user sees on a mistake.
#include "collector/agent/agent_flags.h"

#include <vector>

#include <doctest/doctest.h>

namespace faultline {
namespace {

AgentFlags Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "faultline-agent");
  return ParseAgentFlags(static_cast<int>(args.size()), args.data());
}

TEST_CASE("agent flags: Kafka mode takes --config in both spellings, the last one wins") {
  AgentFlags f = Parse({"--config", "a.yaml", "--config=b.yaml"});
  CHECK(f.action == AgentFlags::Action::kRun);
  CHECK_FALSE(f.standalone);
  CHECK(f.config_path == "b.yaml");
}

TEST_CASE("agent flags: Kafka mode without --config prints the usage, nothing else") {
  AgentFlags f = Parse({});
  CHECK(f.action == AgentFlags::Action::kBadUsage);
  CHECK(f.error == AgentUsage(false));
}

TEST_CASE("agent flags: --check-once needs no --config, and is the Kafka mode's only") {
  AgentFlags bare = Parse({"--check-once"});
  CHECK(bare.action == AgentFlags::Action::kRun);
  CHECK(bare.check_once);
  CHECK(bare.config_path.empty());
  CHECK(Parse({"--check-once", "--config", "a.yaml"}).config_path == "a.yaml");
  CHECK(Parse({"--standalone", "--check-once"}).action == AgentFlags::Action::kBadUsage);
}

TEST_CASE("agent flags: --version wins wherever it stands, even after a bad flag") {
  CHECK(Parse({"--bogus", "--standalone", "--version"}).action ==
        AgentFlags::Action::kPrintVersion);
}

TEST_CASE("agent flags: each mode refuses the other's flags with its own usage") {
  AgentFlags kafka = Parse({"--config", "a.yaml", "--dry-run"});
  CHECK(kafka.action == AgentFlags::Action::kBadUsage);
  CHECK(kafka.error ==
        "faultline-agent: unknown argument '--dry-run'\n" + std::string(AgentUsage(false)));
  AgentFlags standalone = Parse({"--standalone", "--print-default-config"});
  CHECK(standalone.action == AgentFlags::Action::kBadUsage);
  CHECK(standalone.error == "faultline-agent: unknown argument '--print-default-config'\n" +
                                std::string(AgentUsage(true)));
}

TEST_CASE("agent flags: standalone reads --dry-run, --demo and --standalone in any order") {
  AgentFlags f = Parse({"--dry-run", "--standalone", "--config=x.yaml"});
  CHECK(f.action == AgentFlags::Action::kRun);
  CHECK(f.standalone);
  CHECK(f.dry_run);
  CHECK(f.config_path == "x.yaml");
  CHECK(Parse({"--standalone"}).config_path.empty());  // embedded defaults
}

TEST_CASE("agent flags: the first of help and an unknown flag decides") {
  CHECK(Parse({"--standalone", "-h", "--bogus"}).action == AgentFlags::Action::kPrintHelp);
  CHECK(Parse({"--bogus", "--help"}).action == AgentFlags::Action::kBadUsage);
  CHECK(Parse({"--print-default-config", "--bogus"}).action ==
        AgentFlags::Action::kPrintDefaultConfig);
}

TEST_CASE("agent flags: --config without a value is an unknown argument") {
  AgentFlags f = Parse({"--standalone", "--config"});
  CHECK(f.action == AgentFlags::Action::kBadUsage);
  CHECK(f.error.rfind("faultline-agent: unknown argument '--config'\n", 0) == 0);
}

TEST_CASE("agent flags: --demo takes no --config") {
  AgentFlags f = Parse({"--standalone", "--demo", "--config", "a.yaml"});
  CHECK(f.action == AgentFlags::Action::kBadUsage);
  CHECK(f.error == "faultline-agent: --demo takes no --config (it uses the embedded defaults)\n");
}

}  // namespace
}  // namespace faultline
