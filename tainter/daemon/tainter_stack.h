// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/diagnostics.h"
#include "base/metrics.h"
#include "base/status.h"
#include "endpoint/http_endpoint.h"
#include "tainter/apply/node_applier.h"
#include "tainter/correlation/fleet_correlation.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/intake/event_consumer.h"
#include "tainter/intake/rule_check.h"
#include "tainter/kube/eviction.h"
#include "tainter/kube/kube_node_api.h"
#include "tainter/remediation/remediation.h"
#include "tainter/slurm/slurm_node_api.h"
#include "tainter/watch/node_informer.h"
#include "tainter/watch/pod_informer.h"

namespace faultline {

// A Kubernetes client for the tainter's config: the credentials looked up
// in the one documented order (LoadKubeConfigAuto, tainter/kube/kube_config.h:
// the config's kubernetes.kubeconfig or --kubeconfig, $KUBECONFIG's first
// readable file, the in-cluster service account, ~/.kube/config), its QPS,
// burst and timeout. The daemon makes one per thread (its node and pod
// watches), so a long watch never waits behind a write. `problems`: as
// LoadKubeconfig's.
Result<std::unique_ptr<KubeNodeApi>> MakeApi(const TainterConfig& config, MetricsRegistry& metrics,
                                             const Clock& clock = RealClock(),
                                             Diagnostics* problems = nullptr);

// The Slurm actuator for the tainter's config (`actuator: slurm`,
// tainter/slurm/slurm_node_api.h): scontrol with `slurm.slurm_conf`,
// faultline's taint, reasons annotation and opt-out label.
Result<std::unique_ptr<SlurmNodeApi>> MakeSlurmApi(const TainterConfig& config);

// The one tainter, the twin of AgentStack (collector/agent/agent_stack.h):
// the Kubernetes client and the applier over it, which every subcommand
// needs, and for the daemon the parts around them: the node watch, the
// Kafka consumer, fleet correlation with its pod watch, remediation and
// /metrics, driven by one thread.
//
//   auto stack = TainterStack::Create(config, "faultline-tainter", std::cerr);
//   stack->Assemble(rule_check, std::cerr);   // the daemon only
//   int rc = stack->Run(signals);             // until SIGTERM/SIGINT
//   stack->Stop();
//
// Members are destroyed in reverse order: the parts before the applier and
// the client they call, the metrics last. Thread-safety: one thread (the
// caller's) calls every method; the watches run threads of their own.
class TainterStack {
 public:
  // The client (credentials as MakeApi) and the applier. nullptr, with the
  // reason on `err` prefixed by `program`, when either cannot be made; with
  // `json` (--format json), as one JSON array of diagnostics: the
  // kubeconfig's own (file:line:col, code) or one C000 naming what failed.
  static std::unique_ptr<TainterStack> Create(const TainterConfig& config, std::string_view program,
                                              std::ostream& err, bool json = false);
  ~TainterStack();
  TainterStack(const TainterStack&) = delete;
  TainterStack& operator=(const TainterStack&) = delete;

  // The daemon's parts. Every event is checked against `rule_check` (which
  // must outlive the stack; SIGHUP and file changes reload it). false, with
  // the reason on `err`, when a part cannot be made (exit 2).
  bool Assemble(RuleCheck& rule_check, std::ostream& err);
  // The main loop until SIGTERM or SIGINT arrives on `signals` (blocked by
  // the caller). Returns the exit status: 0 clean stop, 1 a runtime failure.
  int Run(const sigset_t& signals);
  // Stops reading: the consumers close (offsets committed), the watches
  // stop. Idempotent.
  void Stop();

  const Clock& clock() const { return clock_; }
  MetricsRegistry& metrics() { return metrics_; }
  NodeApi& api() { return *api_; }
  Tainter& applier() { return *applier_; }
  const TainterConfig& config() const { return config_; }

 private:
  TainterStack(const TainterConfig& config, const Clock& clock) : config_(config), clock_(clock) {}

  bool slurm() const { return config_.actuator == "slurm"; }
  bool AssembleCorrelation(std::ostream& err);
  bool AssembleRemediation(std::ostream& err);
  // The rule category of `rule`, from the rules in force (remediation's by_category).
  std::string CategoryOf(const std::string& rule);
  // One loop iteration's work besides the Kafka poll; false: stop (exit 1).
  bool Step();
  void EverySecond();
  void ObserveNodes(bool only_changes);
  void ReloadRules(const char* why);
  // Correlation decides, the applier acts (tainter/correlation/fleet_correlation.h).
  void Apply(const CorrelationNews& news);

  TainterConfig config_;
  const Clock& clock_;
  MetricsRegistry metrics_;
  std::unique_ptr<NodeApi> api_;  // KubeNodeApi, or SlurmNodeApi with `actuator: slurm`
  EventApi* events_ = nullptr;    // the same object as api_'s
  std::unique_ptr<Tainter> applier_;
  RuleCheck* rule_check_ = nullptr;
  std::unique_ptr<KubeNodeApi> watch_api_;
  std::unique_ptr<NodeInformer> informer_;
  std::unique_ptr<KafkaEventConsumer> consumer_;
  std::unique_ptr<FleetCorrelation> fleet_;
  std::unique_ptr<KubeNodeApi> pod_api_;
  std::unique_ptr<PodInformer> pod_informer_;
  std::unique_ptr<KubeEvictionApi> eviction_api_;
  std::unique_ptr<Remediator> remediator_;
  std::map<std::string, std::string> rule_categories_;  // rule id -> category, per rule set
  const RuleSet* categories_of_ = nullptr;
  std::atomic<bool> kube_ok_{false};
  std::unique_ptr<HttpEndpoint> endpoint_;
  bool subscribed_ = false;
  bool stopped_ = false;
  std::string rules_fingerprint_;
  std::chrono::steady_clock::time_point next_tick_{};
  std::chrono::steady_clock::time_point next_rules_check_{};
};

}  // namespace faultline
