// SPDX-License-Identifier: Apache-2.0
// faultline-agent: the node agent. Reads the config, builds the components
// (rules, sources, Kafka sink, pipeline, reload watcher, HTTP endpoint) and
// runs until SIGTERM/SIGINT; SIGHUP reloads the rules. Exit codes: 0 all
// events delivered, 1 events undelivered or a runtime failure, 2 invalid
// flags, config or rules at startup.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/version.h"
#include "collector/agent/agent_config.h"
#include "collector/agent/agent_metrics.h"
#include "collector/agent/agent_sources.h"
#include "collector/agent/kafka_sink.h"
#include "collector/agent/pipeline.h"
#include "collector/agent/rules_watcher.h"
#include "collector/agent/wait_for_stop.h"
#include "collector/standalone/standalone.h"
#include "endpoint/http_endpoint.h"
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

std::string ReadBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
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
      std::cout << DefaultAgentConfigYaml();
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
  std::ifstream file(config_path, std::ios::binary);
  if (!file) {
    std::cerr << config_path << ": error: cannot read the config file\n";
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  Diagnostics config_diags;
  std::optional<AgentConfig> config = ParseAgentConfig(text.str(), config_path, config_diags);
  if (!config) {
    config_diags.Print(std::cerr, {{config_path, text.str()}});
    return 2;
  }
  SetLogLevel(config->log_level);
  Diagnostics rule_diags;
  SourceTexts rule_texts;
  std::shared_ptr<const RuleSet> rules = LoadRules(config->rules, {}, rule_diags, rule_texts);
  rule_diags.Print(std::cerr, rule_texts);  // warnings too
  if (!rules) return 2;

  // 2. Components, in dependency order; destroyed in reverse.
  MetricsRegistry registry;
  AgentMetrics metrics(registry);
  RuleSetHolder holder(rules);
  metrics.rules_loaded.Set(static_cast<double>(rules->size()));

  KafkaSink::Options kafka = config->kafka;
  std::atomic<bool> fatal{false};
  kafka.on_fatal = [&fatal](const Status&) {
    fatal = true;
    ::kill(::getpid(), SIGTERM);  // to the process, so the main thread's sigwait takes it
  };
  Result<std::unique_ptr<KafkaSink>> sink = KafkaSink::Create(kafka, &metrics);
  if (!sink) {
    std::cerr << config_path << ": error: " << sink.error().message() << '\n';
    return 2;
  }

  Result<std::vector<std::unique_ptr<Source>>> sources = OpenSources(*config, RealClock());
  if (!sources) {
    LogError("agent", "cannot open a source", {{"error", sources.error().ToString()}});
    return sources.error().code() == StatusCode::kFailedPrecondition ? 2 : 1;
  }
  if (sources->empty()) {
    std::cerr << config_path << ": error: no source is enabled\n";
    return 2;
  }

  Pipeline::Options options;
  options.node_name = config->node_name;
  options.boot_id = ReadBootId();
  options.max_batch_records = config->max_batch_records;
  options.max_queued_batches = config->max_queued_batches;
  options.max_uncommitted_records = config->max_uncommitted_records;
  options.checkpoint_interval = config->checkpoint_interval;
  options.suppression.window = config->suppression_window;
  options.suppression.max_folded = config->suppression_max_folded;
  Pipeline pipeline(std::move(*sources), holder, **sink, RealClock(), metrics, options);

  RulesWatcher watcher({config->rules, {}, config->rules_reload_debounce}, holder, metrics);
  if (Status s = watcher.Start(); !s.ok()) {
    LogWarning("agent", "rules directories are not watched", {{"error", s.ToString()}});
  }

  std::unique_ptr<HttpEndpoint> http;
  if (!config->metrics_address.empty()) {
    KafkaSink* kafka_sink = sink->get();
    Result<std::unique_ptr<HttpEndpoint>> endpoint = HttpEndpoint::Start(
        {config->metrics_address}, registry,
        [&holder, kafka_sink] {
          Readiness r;
          if (!holder.Get()) r = {false, "no rules loaded"};
          if (!kafka_sink->reachable()) r = {false, "kafka unreachable"};
          return r;
        },
        [&pipeline, kafka_sink] {
          if (kafka_sink->fatal()) return Readiness{false, "kafka producer failed fatally"};
          if (!pipeline.healthy()) return Readiness{false, "a pipeline thread stopped"};
          return Readiness{};
        });
    if (!endpoint) {
      std::cerr << config_path << ": error: metrics_address " << config->metrics_address << ": "
                << endpoint.error().message() << '\n';
      return 2;
    }
    http = std::move(*endpoint);
  }

  // 3. Run until told to stop.
  pipeline.Start();
  LogInfo("agent", "started",
          {{"node", config->node_name},
           {"rules", rules->size()},
           {"metrics_port", http ? http->port() : 0}});
  WaitForStopSignal(signals, &watcher, metrics);

  // 4. Stop in dependency order: sources, drain, flush with a deadline, commit.
  const std::size_t undelivered =
      pipeline.Stop(std::chrono::steady_clock::now() + config->shutdown_grace);
  nlohmann::json summary = metrics.Summary();
  summary["undelivered"] = undelivered;
  LogInfo("agent", "stopped", summary);
  return (fatal || undelivered > 0) ? 1 : 0;
}

}  // namespace
}  // namespace faultline

int main(int argc, char** argv) {
  // Signals are taken synchronously by the main thread. Block them before any
  // thread starts: threads inherit the mask, so no handler ever interrupts one.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return faultline::Run(argc, argv, signals);
}
