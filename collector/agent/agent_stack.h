// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "collector/agent/agent_config.h"
#include "collector/agent/agent_metrics.h"
#include "collector/agent/event_sink.h"
#include "collector/agent/pipeline.h"
#include "collector/agent/rules_watcher.h"
#include "endpoint/http_endpoint.h"
#include "matcher/rule_set.h"

namespace faultline {

// The agent's compile options: each rule's own RE2 gets max_mem 256 KiB
// instead of 64 MiB. Its DFA caches grow lazily with every new kind of line
// the rule is tried on (prefilter candidates), so ~90 RE2 objects made the
// agent's memory grow with the variety of what it read (bench/README.md,
// "Agent memory"). A rule too large for 256 KiB keeps the default, so which
// rules compile never changes, and a DFA out of room falls back to RE2's
// NFA: the same matches (tests/agent/agent_compile_options_test.cc runs
// every built-in rule's tests under these options).
CompileOptions AgentCompileOptions();

// The one agent: rules, metrics, sources → pipeline → EventSink, the rules
// watcher and the /metrics endpoint, wired the same way whatever the sink.
// `faultline-agent` hands it a KafkaSink, `--standalone` a StandaloneSink
// over the tainter (TainterStack, tainter/daemon/tainter_stack.h, is the
// tainter's twin); nothing else differs.
//
// Built in two steps, because a sink needs the stack's metrics:
//   auto stack = AgentStack::Create(config, std::cerr);     // rules, metrics
//   sink = ...(stack->registry(), stack->metrics());
//   stack->Assemble(sink, checks, options);                 // sources, pipeline, endpoint
//   stack->Start(...); WaitForStop(...); stack->Stop();
// Members are destroyed in reverse order of construction: the endpoint,
// the watcher and the pipeline before the metrics and rules they use. The
// sink (the caller's, made after the stack) must outlive Assemble() until
// Stop(), which closes everything that calls into it; a pipeline that was
// never started does not touch it.
class AgentStack {
 public:
  // What the sink adds to /readyz and /healthz: a reason when it is not,
  // nullopt when it is.
  struct SinkChecks {
    std::function<std::optional<std::string>()> not_ready;
    std::function<std::optional<std::string>()> not_healthy;
  };
  struct Options {
    bool watch_rules = true;  // reload on SIGHUP and directory changes
    // Kafka (a DaemonSet): a metrics port that cannot be opened is a bad
    // config. Standalone (beside other things on a workstation): it costs
    // the metrics, not the agent.
    bool endpoint_required = true;
  };

  // Loads the rules (diagnostics, warnings too, printed to `err`) and makes
  // the metrics. nullptr when the rules do not load: exit 2.
  // `clock` (must outlive the stack) is the one every part of it reads.
  static std::unique_ptr<AgentStack> Create(const AgentConfig& config, std::ostream& err,
                                            const Clock& clock = RealClock());

  MetricsRegistry& registry() { return registry_; }
  AgentMetrics& metrics() { return metrics_; }
  std::size_t rules_loaded() const;

  // Opens every enabled source and builds the pipeline over `sink`, the
  // watcher and the endpoint. Errors: the source's (kFailedPrecondition:
  // not in this build; kPermissionDenied), kInvalidArgument when no source
  // is enabled or a required endpoint cannot start.
  Status Assemble(EventSink& sink, const SinkChecks& checks, Options options);
  // The exit code for an Assemble error: 2 for what the operator must fix
  // before a start can work (config, build, permissions), 1 otherwise.
  static int ExitCode(const Status& assemble_error);

  // Starts reading; logs "started" with the node, rules, port and `fields`.
  void Start(const nlohmann::json& fields = nlohmann::json::object());
  // Until SIGTERM or SIGINT; SIGHUP reloads the rules (WaitForStopSignal).
  void WaitForStop(const sigset_t& signals);
  // Stops in dependency order (sources, drain, flush until shutdown_grace,
  // commit; then the endpoint and the watcher), logs "stopped" with the
  // counters; returns the undelivered count.
  std::size_t Stop();

 private:
  AgentStack(const AgentConfig& config, std::shared_ptr<const RuleSet> rules, const Clock& clock);

  const AgentConfig& config_;
  const Clock& clock_;
  MetricsRegistry registry_;
  AgentMetrics metrics_;
  RuleSetHolder holder_;
  std::unique_ptr<Pipeline> pipeline_;
  std::optional<RulesWatcher> watcher_;
  std::unique_ptr<HttpEndpoint> http_;
};

}  // namespace faultline
