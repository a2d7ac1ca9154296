// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_stack.h"

#include <chrono>
#include <utility>

#include "base/clock.h"
#include "base/log.h"
#include "collector/agent/agent_sources.h"
#include "collector/agent/malloc_bounds.h"
#include "collector/agent/wait_for_stop.h"
#include "collector/sources/boot_id.h"

namespace faultline {
CompileOptions AgentCompileOptions() {
  CompileOptions o;
  o.rule_max_memory_bytes = std::int64_t{256} << 10;
  return o;
}

AgentStack::AgentStack(const AgentConfig& config, std::shared_ptr<const RuleSet> rules,
                       const Clock& clock)
    : config_(config), clock_(clock), metrics_(registry_), holder_(std::move(rules)) {}

std::unique_ptr<AgentStack> AgentStack::Create(const AgentConfig& config, std::ostream& err,
                                               const Clock& clock) {
  Diagnostics diags;
  SourceTexts texts;
  std::shared_ptr<const RuleSet> rules =
      LoadRules(config.rules, AgentCompileOptions(), diags, texts);
  diags.Print(err, texts);  // warnings too
  if (!rules) return nullptr;
  const double count = static_cast<double>(rules->size());
  std::unique_ptr<AgentStack> stack(new AgentStack(config, std::move(rules), clock));
  stack->metrics_.rules_loaded.Set(count);
  return stack;
}

std::size_t AgentStack::rules_loaded() const {
  std::shared_ptr<const RuleSet> rules = holder_.Get();
  return rules ? rules->size() : 0;
}

Status AgentStack::Assemble(EventSink& sink, const SinkChecks& checks, Options options) {
  Result<std::vector<std::unique_ptr<Source>>> sources = OpenSources(config_, clock_, &holder_);
  if (!sources) return sources.error();
  if (sources->empty()) return InvalidArgumentError("no source is enabled");

  Pipeline::Options po;
  po.node_name = config_.node_name;
  Result<std::string> boot_id = ReadBootId(config_.boot_id_path);
  if (boot_id) po.boot_id = *boot_id;  // events without it still say which node
  po.max_batch_records = config_.max_batch_records;
  po.max_queued_batches = config_.max_queued_batches;
  po.max_uncommitted_records = config_.max_uncommitted_records;
  po.suppression_flush_records = config_.suppression_flush_records;
  po.evidence_lines = config_.evidence_lines;
  po.checkpoint_interval = config_.checkpoint_interval;
  po.suppression.window = config_.suppression_window;
  po.suppression.max_folded = config_.suppression_max_folded;
  pipeline_ = std::make_unique<Pipeline>(std::move(*sources), holder_, sink, clock_, metrics_, po);

  if (options.watch_rules) {
    watcher_.emplace(
        RulesWatcher::Options{config_.rules, AgentCompileOptions(), config_.rules_reload_debounce},
        holder_, metrics_, clock_);
    if (Status s = watcher_->Start(); !s.ok()) {
      LogWarning("agent", "rules directories are not watched", {{"error", s.ToString()}});
    }
  }

  if (config_.metrics_address.empty()) return OkStatus();
  Pipeline* pipeline = pipeline_.get();
  Result<std::unique_ptr<HttpEndpoint>> endpoint = HttpEndpoint::Start(
      {config_.metrics_address}, registry_,
      [this, checks] {
        Readiness r;
        if (!holder_.Get()) r = {false, "no rules loaded"};
        if (checks.not_ready) {
          if (std::optional<std::string> why = checks.not_ready()) r = {false, *why};
        }
        return r;
      },
      [pipeline, checks] {
        if (checks.not_healthy) {
          if (std::optional<std::string> why = checks.not_healthy()) return Readiness{false, *why};
        }
        if (!pipeline->healthy()) return Readiness{false, "a pipeline thread stopped"};
        return Readiness{};
      });
  if (!endpoint) {
    if (options.endpoint_required) {
      return InvalidArgumentError("metrics_address " + config_.metrics_address + ": " +
                                  endpoint.error().message());
    }
    LogWarning("agent", "metrics endpoint not started",
               {{"address", config_.metrics_address}, {"error", endpoint.error().message()}});
    return OkStatus();
  }
  http_ = std::move(*endpoint);
  return OkStatus();
}

int AgentStack::ExitCode(const Status& assemble_error) {
  switch (assemble_error.code()) {
    case StatusCode::kFailedPrecondition:
    case StatusCode::kPermissionDenied:
    case StatusCode::kInvalidArgument:
      return 2;
    default:
      return 1;
  }
}

void AgentStack::Start(const nlohmann::json& fields) {
  ReleaseFreedMemory();  // what compiling the rules freed, before the readers start
  pipeline_->Start();
  nlohmann::json log = {{"node", config_.node_name},
                        {"rules", rules_loaded()},
                        {"metrics_port", http_ ? http_->port() : 0}};
  log.update(fields);
  LogInfo("agent", "started", log);
}

void AgentStack::WaitForStop(const sigset_t& signals) {
  WaitForStopSignal(signals, watcher_ ? &*watcher_ : nullptr, metrics_, clock_);
}

std::size_t AgentStack::Stop() {
  const std::size_t undelivered = pipeline_->Stop(clock_.MonotonicNow() + config_.shutdown_grace);
  // The endpoint's checks call into the sink: close it (it served /healthz
  // while the pipeline drained), so the caller may destroy the sink next.
  http_.reset();
  watcher_.reset();
  nlohmann::json summary = metrics_.Summary();
  summary["undelivered"] = undelivered;
  LogInfo("agent", "stopped", summary);
  return undelivered;
}

}  // namespace faultline
