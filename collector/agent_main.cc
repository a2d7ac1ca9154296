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

#include "base/log.h"
#include "base/stop_signals.h"
#include "base/version.h"
#include "collector/agent/agent_config.h"
#include "collector/agent/agent_flags.h"
#include "collector/agent/agent_stack.h"
#include "collector/agent/check_once.h"
#include "collector/agent/identity_publisher.h"
#include "collector/agent/kafka_sink.h"
#include "collector/agent/malloc_bounds.h"
#include "collector/standalone/standalone.h"
#include "collector/standalone/standalone_config.h"
#include "matcher/matcher_versions.h"

namespace faultline {
namespace {

std::string VersionInfo() {
  std::vector<VersionComponent> components = MatcherVersions();
  components.insert(components.begin() + 2, {"librdkafka", rd_kafka_version_str()});
  return VersionText("faultline-agent", components);
}

int Run(int argc, char** argv, const sigset_t& signals) {
  const AgentFlags flags = ParseAgentFlags(argc, argv);
  switch (flags.action) {
    case AgentFlags::Action::kPrintVersion:
      std::cout << VersionInfo();
      return 0;
    case AgentFlags::Action::kPrintHelp:
      std::cout << AgentUsage(flags.standalone) << AgentHelp(flags.standalone);
      return 0;
    case AgentFlags::Action::kPrintDefaultConfig:
      std::cout << DefaultAgentConfigYaml() << DefaultStandaloneConfigYaml();
      return 0;
    case AgentFlags::Action::kBadUsage:
      std::cerr << flags.error;
      return 2;
    case AgentFlags::Action::kRun:
      break;
  }
  if (flags.standalone) return RunStandalone(flags, signals);
  if (flags.check_once) {
    return RunCheckOnce({.config_path = flags.config_path}, std::cout, std::cerr);
  }
  const std::string& config_path = flags.config_path;

  // 1. Config and rules: every problem is reported before anything starts.
  std::optional<StandaloneAgentConfig> config =
      LoadStandaloneAgentConfig(config_path, AgentMode::kKafka, std::cerr, flags.json);
  if (!config) return 2;
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

  // The node identity for the tainter's fleet correlation, on its own
  // producer and thread (collector/agent/identity_publisher.h).
  std::unique_ptr<IdentityPublisher> identity;
  if (config->identity_enabled) {
    IdentityPublisher::Options io = config->identity;
    io.brokers = config->kafka.brokers;
    io.properties = config->kafka.properties;
    io.node = config->node_name;
    auto made = IdentityPublisher::Create(io, stack->registry());
    if (!made) {
      std::cerr << config_path << ": error: " << made.error().message() << '\n';
      return 2;
    }
    identity = std::move(*made);
  }

  // 3. Run until told to stop; 4. stop in dependency order.
  stack->Start();
  if (identity) identity->Start();
  stack->WaitForStop(signals);
  if (identity) identity->Stop();
  const std::size_t undelivered = stack->Stop();
  return (fatal || undelivered > 0) ? 1 : 0;
}

}  // namespace
}  // namespace faultline

int main(int argc, char** argv) {
  faultline::BoundMallocFootprint();  // before any thread allocates
  // Signals are taken synchronously by the main thread. Block them before any
  // thread starts: threads inherit the mask, so no handler ever interrupts one.
  const sigset_t signals = faultline::BlockSignals({SIGINT, SIGTERM, SIGHUP});
  return faultline::Run(argc, argv, signals);
}
