// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/tainter_stack.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

#include "base/log.h"
#include "tainter/kube/kube_config.h"

namespace faultline {
namespace {

// The rule packs are loaded again when SIGHUP arrives or when their files
// change (checked this often): the agents reload the same ConfigMap on
// their own, and an event of a rule the tainter does not know yet is set
// aside. A pack that does not load keeps the running rules in force.
constexpr auto kRulePackCheckInterval = std::chrono::seconds(10);

bool DrainPossible(const RemediationOptions& r) {
  auto drains = [](const auto& kv) { return kv.second == RemediationAction::kDrain; };
  return r.action == RemediationAction::kDrain ||
         std::any_of(r.by_rule.begin(), r.by_rule.end(), drains) ||
         std::any_of(r.by_category.begin(), r.by_category.end(), drains);
}

}  // namespace

Result<std::unique_ptr<KubeNodeApi>> MakeApi(const TainterConfig& config, MetricsRegistry& metrics,
                                             const Clock& clock, Diagnostics* problems) {
  Result<KubeConfig> kube =
      LoadKubeConfigAuto(config.kubernetes.kubeconfig, config.kubernetes.context, {}, problems);
  if (!kube) return kube.error();
  KubeNodeApi::Options o;
  o.http.qps = config.kubernetes.qps;
  o.http.burst = config.kubernetes.burst;
  o.http.request_timeout = config.kubernetes.request_timeout;
  o.list_page_size = config.list_page_size;
  // The daemon's one thread calls the API between Kafka polls: one call,
  // retries included, must end well within max.poll.interval.ms (with the
  // default 300 s this leaves the 30 s deadline as it is).
  o.http.call_deadline = std::min<std::chrono::milliseconds>(
      o.http.call_deadline, MaxPollInterval(config.kafka.properties) / 3);
  LogInfo("tainter", "kubernetes", {{"api", kube->Describe()}});
  return KubeNodeApi::Create(std::move(*kube), o, clock, metrics);
}

Result<std::unique_ptr<SlurmNodeApi>> MakeSlurmApi(const TainterConfig& config) {
  SlurmNodeApi::Options o;
  o.settings = config.slurm;
  o.taint = config.tainter.taint;
  o.annotation_key = config.tainter.annotation_key;
  o.opt_out_label = config.tainter.opt_out_label;
  // scontrol's whole environment: where it finds slurm.conf (and through
  // it munge's socket), nothing of the tainter's own.
  std::vector<std::string> env{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                               "LC_ALL=C"};
  if (!config.slurm.slurm_conf.empty()) env.push_back("SLURM_CONF=" + config.slurm.slurm_conf);
  LogInfo("tainter", "slurm",
          {{"scontrol", config.slurm.scontrol},
           {"slurm_conf", config.slurm.slurm_conf},
           {"valve_record", config.slurm.valve_record}});
  return SlurmNodeApi::Create(std::move(o), std::make_unique<SpawnRunner>(std::move(env)));
}

std::unique_ptr<TainterStack> TainterStack::Create(const TainterConfig& config,
                                                   std::string_view program, std::ostream& err,
                                                   bool json) {
  std::unique_ptr<TainterStack> stack(new TainterStack(config, RealClock()));
  if (config.actuator == "slurm") {
    auto slurm = MakeSlurmApi(config);
    if (!slurm) {
      err << program << ": " << slurm.error().message() << '\n';
      return nullptr;
    }
    SlurmNodeApi& s = **slurm;
    stack->events_ = &s;
    stack->api_ = std::move(*slurm);
    // Slurm has no watch: the applier reads the nodes every poll_interval.
    // Nor node conditions, pods or Events (a log line records them); the
    // valve is shared through slurm.valve_record when there is one.
    stack->config_.tainter.resync_interval = config.slurm.poll_interval;
    stack->config_.tainter.node_conditions = false;
    ApplierApis apis{s, s, nullptr, config.slurm.valve_record.empty() ? nullptr : &s};
    auto applier = Tainter::Create(stack->config_.tainter, apis, stack->metrics_, stack->clock_);
    if (!applier) {
      err << program << ": " << applier.error().message() << '\n';
      return nullptr;
    }
    stack->applier_ = std::move(*applier);
    return stack;
  }
  Diagnostics problems;
  auto api = MakeApi(config, stack->metrics_, stack->clock_, &problems);
  if (!api) {
    if (!json) {
      err << program << ": " << api.error().message() << '\n';
      return nullptr;
    }
    // Not a kubeconfig's own line (none found, in-cluster, TLS): the file named, if any.
    if (problems.error_count() == 0) {
      problems.Error("C000", {config.kubernetes.kubeconfig, 0, 0}, api.error().message());
    }
    err << problems.ToJson().dump() << '\n';
    return nullptr;
  }
  KubeNodeApi& kube = **api;
  stack->events_ = &kube;
  stack->api_ = std::move(*api);
  // The daemon has every capability: nodes, Events, pods and the shared valve record.
  auto applier =
      Tainter::Create(config.tainter, ApplierApis::All(kube), stack->metrics_, stack->clock_);
  if (!applier) {
    err << program << ": " << applier.error().message() << '\n';
    return nullptr;
  }
  stack->applier_ = std::move(*applier);
  return stack;
}

TainterStack::~TainterStack() { Stop(); }

bool TainterStack::Assemble(RuleCheck& rule_check, std::ostream& err) {
  rule_check_ = &rule_check;
  // API work per loop iteration: a third of max.poll.interval.ms (and each
  // call at most another third, see MakeApi), so an API outage never keeps
  // the one thread from Kafka's poll long enough to be dropped from the group.
  config_.tainter.round_budget = MaxPollInterval(config_.kafka.properties) / 3;
  // Not through applier_->options(): Create made the applier from the config
  // before the budget was known.
  applier_->set_round_budget(config_.tainter.round_budget);
  config_.kafka.rule_check = &rule_check;
  // The consumer copies its Options: it calls back through the stack, which
  // hands it the node changes seen since the last poll before each decision.
  config_.kafka.before_decide = [this] { ObserveNodes(/*only_changes=*/true); };
  // The nodes are listed and then watched (tainter/watch/node_informer.h) on a
  // thread of their own, through a client of their own. Slurm: polled by
  // the applier's Tick() (no watch).
  if (!slurm()) {
    auto watch_api = MakeApi(config_, metrics_);
    if (!watch_api) {
      err << "faultline-tainter: " << watch_api.error().message() << '\n';
      return false;
    }
    watch_api_ = std::move(*watch_api);
    informer_ = std::make_unique<NodeInformer>(
        *watch_api_, NodeInformer::Options{.selector = config_.tainter.node_selector}, metrics_);
    applier_->set_watched(true);
    informer_->Start();
  }
  auto consumer = KafkaEventConsumer::Create(config_.kafka, *applier_, metrics_, clock_);
  if (!consumer) {
    err << "faultline-tainter: " << consumer.error().message() << '\n';
    return false;
  }
  consumer_ = std::move(*consumer);
  if (config_.correlation.enabled && !AssembleCorrelation(err)) return false;
  if (config_.remediation.Active() && !AssembleRemediation(err)) return false;
  kube_ok_ = applier_->adopted();
  KafkaEventConsumer* kafka = consumer_.get();
  auto endpoint =
      HttpEndpoint::Start({.address = config_.metrics_address}, metrics_, [this, kafka]() {
        Readiness r;
        if (!kafka->ready()) r.detail += "kafka not assigned or unreachable; ";
        if (!kube_ok_.load()) {
          r.detail += slurm() ? "slurm unreachable; " : "kubernetes unreachable; ";
        }
        r.ready = r.detail.empty();
        return r;
      });
  if (!endpoint) {
    err << "faultline-tainter: metrics_address " << config_.metrics_address << ": "
        << endpoint.error().message() << '\n';
    return false;
  }
  endpoint_ = std::move(*endpoint);
  return true;
}

bool TainterStack::AssembleCorrelation(std::ostream& err) {
  // Fleet correlation (tainter/README.md): every partition, read apart
  // from the group, so accusations and incidents see every node.
  auto made = FleetCorrelation::Create({.brokers = config_.kafka.brokers,
                                        .events_topic = config_.kafka.topic,
                                        .identity_topic = config_.correlation.identity_topic,
                                        .group = config_.kafka.group,
                                        .properties = config_.kafka.properties,
                                        .rebuild_span = config_.correlation.rebuild_span,
                                        .rebuild_max_messages = config_.kafka.rebuild_max_messages},
                                       config_.correlation.correlator, metrics_, clock_);
  if (!made) {
    err << "faultline-tainter: " << made.error().message() << '\n';
    return false;
  }
  fleet_ = std::move(*made);
  applier_->SetBlamesPeer(fleet_->BlamesPeer());
  if (slurm()) return true;  // no pods to watch: peers are found by address and GID only
  // Pod IPs and controllers for correlation, watched on a thread and
  // through a client of their own (tainter/watch/pod_informer.h).
  auto api = MakeApi(config_, metrics_);
  if (!api) {
    err << "faultline-tainter: " << api.error().message() << '\n';
    return false;
  }
  pod_api_ = std::move(*api);
  pod_informer_ = std::make_unique<PodInformer>(*pod_api_, PodInformer::Options{}, metrics_);
  pod_informer_->Start();
  return true;
}

bool TainterStack::AssembleRemediation(std::ostream& err) {
  // Cordon and drain (tainter/remediation/remediation.h): only when the
  // config names them, through a client of its own that hands a PDB's 429 back.
  Result<KubeConfig> kube =
      LoadKubeConfigAuto(config_.kubernetes.kubeconfig, config_.kubernetes.context);
  if (!kube) {
    err << "faultline-tainter: " << kube.error().message() << '\n';
    return false;
  }
  KubeHttpClient::Options http;
  http.qps = config_.kubernetes.qps;
  http.burst = config_.kubernetes.burst;
  http.request_timeout = config_.kubernetes.request_timeout;
  http.call_deadline = std::min<std::chrono::milliseconds>(
      http.call_deadline, MaxPollInterval(config_.kafka.properties) / 3);
  auto made = KubeEvictionApi::Create(std::move(*kube), http, clock_, metrics_);
  if (!made) {
    err << "faultline-tainter: " << made.error().message() << '\n';
    return false;
  }
  eviction_api_ = std::move(*made);
  RemediationOptions ro = config_.remediation;
  ro.dry_run = config_.tainter.dry_run;
  Tainter* applier = applier_.get();
  Remediator::View view;
  view.ready = [applier] { return applier->adopted(); };
  view.tainted_nodes = [applier] { return applier->policy().TaintedNodes(); };
  view.reasons = [applier](const std::string& n) { return applier->policy().ActiveReasons(n); };
  view.owns = [kafka = consumer_.get()](const std::string& n) { return kafka->Owns(n); };
  view.category = [this](const std::string& rule) { return CategoryOf(rule); };
  remediator_ = std::make_unique<Remediator>(std::move(ro), std::move(view), *eviction_api_, *api_,
                                             *events_, metrics_, clock_);
  // A drain past its deadline: the node's conditions say it needs a person.
  remediator_->OnNeedsPerson([applier](const std::string& node, const std::string& why) {
    applier->MarkNeedsPerson(node, why);
  });
  LogWarning("tainter", "remediation beyond the taint is on",
             {{"action", std::string(RemediationActionName(config_.remediation.action))},
              {"drain_possible", DrainPossible(config_.remediation)}});
  return true;
}

std::string TainterStack::CategoryOf(const std::string& rule) {
  if (categories_of_ != &rule_check_->rules()) {  // reloaded: read the categories again
    categories_of_ = &rule_check_->rules();
    rule_categories_.clear();
    for (const Rule& r : categories_of_->rules()) rule_categories_[r.id] = r.category;
  }
  auto it = rule_categories_.find(rule);
  return it == rule_categories_.end() ? std::string() : it->second;
}

void TainterStack::ObserveNodes(bool only_changes) {
  if (!informer_) return;
  std::vector<NodeWatchChange> changes = informer_->Take();
  if (only_changes && changes.empty()) return;
  if (fleet_) fleet_->ObserveNodes(changes);
  applier_->Observe(std::move(changes));
}

void TainterStack::ReloadRules(const char* why) {
  std::ostringstream diags;
  std::shared_ptr<const RuleSet> rules = LoadRulePacks(config_.rules, diags);
  if (!rules) {
    LogError("rules", "reload failed; the running rules stay in force",
             {{"reason", why}, {"diagnostics", diags.str()}});
    return;
  }
  rule_check_->Replace(std::move(rules));
  LogInfo("rules", "rules reloaded", {{"reason", why}, {"rules", rule_check_->rules().size()}});
}

void TainterStack::Apply(const CorrelationNews& news) {
  // Handle copies an event only for work that waits (node_applier.h).
  for (const FaultEvent& blame : news.blames) applier_->Handle(blame);
  // The incidents' Events: one attempt each (a repeat is counted by the
  // Event's deterministic name, never duplicated).
  for (const CorrelationNews::IncidentEvent& e : news.events) {
    if (e.owner) {
      if (Status s = applier_->RecordEvent(*e.owner); !s.ok()) {
        LogWarning("correlation", "cannot record the incident's Event on its job",
                   {{"job", e.job}, {"error", s.ToString()}});
      }
    } else {
      LogInfo("correlation", "the incident's job has no known owner object: no Event on it",
              {{"job", e.job}});
    }
    if (e.node.empty()) continue;
    if (Status s = applier_->RecordNodeEvent(e.node, e.node_event); !s.ok()) {
      LogWarning("correlation", "cannot record the incident's Event",
                 {{"node", e.node}, {"error", s.ToString()}});
    }
  }
}

int TainterStack::Run(const sigset_t& signals) {
  int sfd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    LogError("tainter", "signalfd failed");
    return 1;
  }
  LogInfo("tainter", "started",
          {{"metrics", config_.metrics_address}, {"dry_run", config_.tainter.dry_run}});
  next_tick_ = clock_.MonotonicNow();
  rules_fingerprint_ = RulePackFingerprint(config_.rules);
  next_rules_check_ = next_tick_ + kRulePackCheckInterval;
  int rc = 0;
  for (;;) {
    signalfd_siginfo info{};
    if (read(sfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGHUP) {
        ReloadRules("SIGHUP");
        continue;
      }
      LogInfo("tainter", "stopping", {{"signal", static_cast<int>(info.ssi_signo)}});
      break;
    }
    if (!Step()) {
      rc = 1;
      break;
    }
  }
  close(sfd);
  return rc;
}

bool TainterStack::Step() {
  if (clock_.MonotonicNow() >= next_rules_check_) {
    if (std::string now = RulePackFingerprint(config_.rules); now != rules_fingerprint_) {
      rules_fingerprint_ = std::move(now);
      ReloadRules("files changed");
    }
    next_rules_check_ = clock_.MonotonicNow() + kRulePackCheckInterval;
  }
  applier_->BeginRound();
  ObserveNodes(/*only_changes=*/false);
  if (fleet_) {
    if (pod_informer_) fleet_->ObservePods(pod_informer_->Take());
    fleet_->Poll(std::chrono::milliseconds(0));
  }
  // Nothing is consumed before the nodes were read: the valve counts
  // them, and a decision needs the node's state.
  // With correlation, also not before the identities are read: a
  // reporter's line naming a peer must resolve to be set aside.
  if (!subscribed_ && applier_->adopted() && (!fleet_ || fleet_->ready())) {
    if (Status s = consumer_->Start(); !s.ok()) {
      LogError("tainter", "cannot subscribe", {{"error", s.ToString()}});
      return false;
    }
    subscribed_ = true;
  }
  if (subscribed_) {
    // The poll's new taints take their places in the valve record
    // together: one Lease write for up to Tainter::kReservationsPerWrite.
    applier_->HoldReservations();
    consumer_->Poll(std::chrono::milliseconds(100));
    applier_->ReserveHeld();
  } else {
    usleep(100'000);
  }
  if (clock_.MonotonicNow() >= next_tick_) {
    EverySecond();
    next_tick_ = clock_.MonotonicNow() + std::chrono::seconds(1);
  }
  return true;
}

void TainterStack::EverySecond() {
  applier_->Tick();
  if (remediator_) remediator_->Tick();
  if (fleet_) {
    KafkaEventConsumer* kafka = consumer_.get();
    Apply(fleet_->Tick([kafka](const std::string& key) { return kafka->Owns(key); }));
  }
  consumer_->Commit();
  kube_ok_ =
      applier_->adopted() && applier_->api_reachable() && !(informer_ && informer_->failing());
}

void TainterStack::Stop() {
  if (stopped_ || !consumer_) return;  // not assembled: nothing runs
  stopped_ = true;
  consumer_->Close();
  if (fleet_) fleet_->Close();
  if (pod_informer_) pod_informer_->Stop();
  if (informer_) informer_->Stop();
  LogInfo("tainter", "stopped",
          {{"pending_decisions", applier_->pending()},
           {"events", metrics_.CounterValue("faultline_tainter_events_consumed_total")},
           {"taints_added", metrics_.CounterValue("faultline_tainter_taints_added_total")}});
}

}  // namespace faultline
