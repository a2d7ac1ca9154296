// SPDX-License-Identifier: Apache-2.0
// faultline-agent: the node agent. Reads the config, builds the components
// (rules, sources, Kafka sink, pipeline, reload watcher, HTTP endpoint) and
// runs until SIGTERM/SIGINT; SIGHUP reloads the rules. Exit codes: 0 all
// events delivered, 1 events undelivered or a runtime failure, 2 invalid
// flags, config or rules at startup.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "base/config_reader.h"
#include "base/log.h"
#include "base/version.h"
#include "collector/agent/agent_config.h"
#include "collector/agent/agent_stack.h"
#include "collector/agent/kafka_sink.h"
#include "collector/agent/malloc_bounds.h"
#include "collector/standalone/standalone.h"
#include "collector/standalone/standalone_config.h"
#include "matcher/matcher_versions.h"

namespace faultline {
namespace {

constexpr char kUsage[] =
    "usage: faultline-agent --config FILE\n"
    "       faultline-agent --standalone [--dry-run] [--config FILE]   (no Kafka)\n"
    "       faultline-agent --standalone --demo\n"
    "       faultline-agent --print-default-config\n"
    "       faultline-agent --version\n";

constexpr char kHelp[] = R"(
The node agent: reads /dev/kmsg, the journal, pod logs and InfiniBand
counters, matches them against the rule packs and publishes one event per
fault to Kafka (key = node). Runs until SIGTERM or SIGINT; SIGHUP reloads
the rules.

  --config FILE           the agent config (YAML); every key and its default:
                          faultline-agent --print-default-config
  --standalone            no Kafka: the tainter's policy in this process, acting
                          on this node only (faultline-agent --standalone --help)
  --print-default-config  print the default config and exit
  --version               print the version, the libraries' and the built-in
                          rule packs' versions, and exit
  -h, --help              print this help and exit

Exit status: 0 stopped with every event delivered; 1 events left undelivered
or a runtime failure; 2 bad flags, an invalid config or invalid rules.
)";

std::string VersionInfo() {
  std::vector<VersionComponent> components = MatcherVersions();
  components.insert(components.begin() + 2, {"librdkafka", rd_kafka_version_str()});
  return VersionText("faultline-agent", components);
}

int Run(int argc, char** argv, const sigset_t& signals) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--version") {
      std::cout << VersionInfo();
      return 0;
    }
  }
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--standalone") return RunStandalone(argc, argv, signals);
  }
  std::string config_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--print-default-config") {
      std::cout << DefaultAgentConfigYaml() << DefaultStandaloneConfigYaml();
      return 0;
    }
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage << kHelp;
      return 0;
    } else {
      std::cerr << "faultline-agent: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (config_path.empty()) {
    std::cerr << kUsage;
    return 2;
  }

  // 1. Config and rules: every problem is reported before anything starts.
  std::string text;
  if (Status s = ReadConfigText(config_path, text); !s.ok()) {
    std::cerr << config_path << ": error: cannot read the config file\n";
    return 2;
  }
  Diagnostics config_diags;
  std::optional<StandaloneAgentConfig> config =
      ParseStandaloneAgentConfig(text, config_path, config_diags, AgentMode::kKafka);
  if (!config) {
    config_diags.Print(std::cerr, {{config_path, text}});
    return 2;
  }
  SetLogLevel(config->log_level);
  std::unique_ptr<AgentStack> stack = AgentStack::Create(*config, std::cerr);
  if (!stack) return 2;

  // 2. The sink (it counts in the stack's metrics), then the stack's sources,
  // pipeline and endpoint over it.
  KafkaSink::Options kafka = config->kafka;
  std::atomic<bool> fatal{false};
  kafka.on_fatal = [&fatal](const Status&) {
    fatal = true;
    ::kill(::getpid(), SIGTERM);  // to the process, so the main thread's sigwait takes it
  };
  Result<std::unique_ptr<KafkaSink>> sink = KafkaSink::Create(kafka, &stack->metrics());
  if (!sink) {
    std::cerr << config_path << ": error: " << sink.error().message() << '\n';
    return 2;
  }
  KafkaSink* kafka_sink = sink->get();
  AgentStack::SinkChecks checks;
  checks.not_ready = [kafka_sink]() -> std::optional<std::string> {
    if (!kafka_sink->reachable()) return "kafka unreachable";
    return std::nullopt;
  };
  checks.not_healthy = [kafka_sink]() -> std::optional<std::string> {
    if (kafka_sink->fatal()) return "kafka producer failed fatally";
    return std::nullopt;
  };
  if (Status s = stack->Assemble(**sink, checks, {}); !s.ok()) {
    std::cerr << config_path << ": error: " << s.message() << '\n';
    return AgentStack::ExitCode(s);
  }

  // 3. Run until told to stop; 4. stop in dependency order.
  stack->Start();
  stack->WaitForStop(signals);
  const std::size_t undelivered = stack->Stop();
  return (fatal || undelivered > 0) ? 1 : 0;
}

}  // namespace
}  // namespace faultline

int main(int argc, char** argv) {
  faultline::BoundMallocFootprint();  // before any thread allocates
  // Signals are taken synchronously by the main thread. Block them before any
  // thread starts: threads inherit the mask, so no handler ever interrupts one.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return faultline::Run(argc, argv, signals);
}
