// SPDX-License-Identifier: Apache-2.0
// faultline-tainter: Kafka -> policy -> Kubernetes taints.
//
//   faultline-tainter --config FILE [--dry-run] [--log-level L]
//   faultline-tainter nodes|explain NODE|untaint NODE ...   (tainter/daemon/node_commands.h)
//   faultline-tainter [SUBCOMMAND] --help | --version
//
// Exit codes: 0 clean stop, 1 runtime failure, 2 bad flags or config.
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "base/log.h"
#include "base/stop_signals.h"
#include "base/version.h"
#include "matcher/matcher_versions.h"
#include "tainter/daemon/incidents_command.h"
#include "tainter/daemon/node_commands.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/daemon/tainter_stack.h"
#include "tainter/intake/rule_check.h"

namespace faultline {
namespace {

constexpr char kUsage[] =
    "usage: faultline-tainter --config FILE [--dry-run] [--log-level debug|info|warn|error]\n"
    "                         [--format json|text]\n"
    "       faultline-tainter nodes|explain NODE|untaint NODE [FLAGS]   (--help for each)\n"
    "       faultline-tainter --version\n";

constexpr char kDaemonHelp[] = R"(
The central tainter: consumes faultline's events from Kafka, decides per node
(dedupe, threshold windows, safety valve, expiry) and taints, annotates and
records Events on the nodes through the Kubernetes API. Runs until SIGTERM or
SIGINT; SIGHUP reloads the rule packs.

  --config FILE, -c FILE  the tainter config (YAML; tainter/README.md)
  --dry-run               decide and log every write, send none
  --format json|text      how config problems are reported on stderr (text:
                          file:line:col, code, source line and caret; json: one
                          array of {file,line,column,level,code,message})
  --log-level LEVEL       debug, info, warn or error (overrides the config)
  --version               print the version, the libraries' and the built-in
                          rule packs' versions
  -h, --help              print this help

The operator's subcommands (also the kubectl plugin `kubectl faultline`):
  nodes                   the nodes carrying faultline's taint, and why
  explain NODE            why NODE is tainted and what would lift the taint
  untaint NODE            lift faultline's taint by hand
  incidents               the incidents of the last hour (one job, many nodes)
Run `faultline-tainter SUBCOMMAND --help` for each.

Exit status: 0 clean stop; 1 a runtime failure; 2 bad flags or an invalid
config.
)";

struct Flags {
  std::string config;
  bool dry_run = false;
  std::string log_level;
  bool json = false;  // --format json: config problems as a JSON array
  bool help = false;
};

Result<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& name) -> Result<std::string> {
      if (i + 1 >= args.size()) return InvalidArgumentError(name + " needs a value");
      return args[++i];
    };
    if (a == "--config" || a == "-c") {
      auto v = value(a);
      if (!v) return v.error();
      f.config = *v;
    } else if (a.rfind("--config=", 0) == 0) {
      f.config = a.substr(9);
    } else if (a == "--log-level") {
      auto v = value(a);
      if (!v) return v.error();
      f.log_level = *v;
    } else if (a == "--dry-run") {
      f.dry_run = true;
    } else if (a == "--format") {
      auto v = value(a);
      if (!v) return v.error();
      if (*v != "json" && *v != "text") {
        return InvalidArgumentError("--format must be json or text");
      }
      f.json = *v == "json";
    } else if (a == "-h" || a == "--help") {
      f.help = true;
      return f;
    } else {
      return InvalidArgumentError("unknown argument '" + a + "'");
    }
  }
  if (f.config.empty()) return InvalidArgumentError("--config is required");
  return f;
}

}  // namespace
}  // namespace faultline

// An exception reaching main is a bug: std::terminate's abort and core dump show
// where it was thrown, which a catch here would lose.
// NOLINTNEXTLINE(bugprone-exception-escape)
int main(int argc, char** argv) {
  using namespace faultline;  // NOLINT(google-build-using-namespace): main only
  // Signals are taken synchronously through a signalfd by the one thread
  // that owns everything; block them before librdkafka starts its threads.
  // SIGHUP reloads the rule packs.
  const sigset_t signals = BlockSignals({SIGINT, SIGTERM, SIGHUP});
  signal(SIGPIPE, SIG_IGN);

  const std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "--version") {
      // The built-in rule packs every event is checked against, as the
      // agent lists them.
      std::vector<VersionComponent> components = MatcherVersions();
      std::vector<VersionComponent> tainter = TainterVersions();
      components.insert(components.begin() + 2, tainter.begin(), tainter.end());
      std::cout << VersionText("faultline-tainter", components);
      return 0;
    }
  }
  if (!args.empty() && args[0] == "incidents") {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const int rc = RunIncidentsCommand(args, std::cout, std::cerr);
    curl_global_cleanup();
    return rc;
  }
  if (!args.empty() && IsNodeCommand(args[0])) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const int rc = RunNodeCommand("faultline-tainter", args, std::cout, std::cerr);
    curl_global_cleanup();
    return rc;
  }
  Result<Flags> flags = ParseFlags(argc, argv);
  if (!flags) {
    std::cerr << "faultline-tainter: " << flags.error().message() << '\n' << kUsage;
    return 2;
  }
  if (flags->help) {
    std::cout << kUsage << kDaemonHelp;
    return 0;
  }
  TainterConfig config;
  if (!flags->config.empty()) {
    std::optional<TainterConfig> loaded =
        LoadTainterConfig(flags->config, std::cerr, /*require_brokers=*/true, flags->json);
    if (!loaded) return 2;
    config = std::move(*loaded);
  }
  if (flags->dry_run) config.tainter.dry_run = true;
  if (!flags->log_level.empty() && !ParseLogLevel(flags->log_level, &config.log_level)) {
    std::cerr << "faultline-tainter: --log-level must be debug, info, warn or error\n" << kUsage;
    return 2;
  }
  SetLogLevel(config.log_level);
  // Every event is checked against these (tainter/intake/rule_check.h); a broken
  // pack stops the start as a bad config does.
  std::shared_ptr<const RuleSet> rules = LoadRulePacks(config.rules, std::cerr);
  if (!rules) return 2;
  RuleCheck rule_check(std::move(rules), config.on_mismatch);
  LogInfo(
      "rules", "rules loaded",
      {{"rules", rule_check.rules().size()},
       {"on_mismatch",
        config.on_mismatch == RuleCheck::OnMismatch::kSetAside ? "set_aside" : "decide_by_rule"}});
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 2;
  if (std::unique_ptr<TainterStack> stack =
          TainterStack::Create(config, "faultline-tainter", std::cerr, flags->json);
      stack && stack->Assemble(rule_check, std::cerr)) {
    rc = stack->Run(signals);
    stack->Stop();
  }
  curl_global_cleanup();
  return rc;
}
