// SPDX-License-Identifier: Apache-2.0
// faultline-tainter: Kafka -> policy -> Kubernetes taints.
//
//   faultline-tainter --config FILE [--dry-run] [--log-level L]
//   faultline-tainter nodes|explain NODE|untaint NODE ...   (tainter/daemon/node_commands.h)
//   faultline-tainter [SUBCOMMAND] --help | --version
//
// Exit codes: 0 clean stop, 1 runtime failure, 2 bad flags or config.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/stop_signals.h"
#include "base/time_format.h"
#include "base/version.h"
#include "endpoint/http_endpoint.h"
#include "matcher/matcher_versions.h"
#include "tainter/correlation/fleet_correlation.h"
#include "tainter/intake/event_consumer.h"
#include "tainter/daemon/incidents_command.h"
#include "tainter/kube/eviction.h"
#include "tainter/kube/kube_config.h"
#include "tainter/daemon/node_commands.h"
#include "tainter/watch/node_informer.h"
#include "tainter/watch/pod_informer.h"
#include "tainter/remediation/remediation.h"
#include "tainter/intake/rule_check.h"
#include "tainter/apply/node_applier.h"
#include "tainter/daemon/tainter_config.h"

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

// The rule packs are loaded again when SIGHUP arrives or when their files
// change (checked this often): the agents reload the same ConfigMap on
// their own, and an event of a rule the tainter does not know yet is set
// aside. A pack that does not load keeps the running rules in force.
constexpr auto kRulePackCheckInterval = std::chrono::seconds(10);

void ReloadRules(const TainterConfig& config, RuleCheck& check, const char* why) {
  std::ostringstream diags;
  std::shared_ptr<const RuleSet> rules = LoadRulePacks(config.rules, diags);
  if (!rules) {
    LogError("rules", "reload failed; the running rules stay in force",
             {{"reason", why}, {"diagnostics", diags.str()}});
    return;
  }
  check.Replace(std::move(rules));
  LogInfo("rules", "rules reloaded", {{"reason", why}, {"rules", check.rules().size()}});
}

// json: --format json, for the credentials' problems as for the config's.
int RunDaemon(const TainterConfig& given, RuleCheck& rule_check, const sigset_t& signals,
              bool json) {
  // API work per loop iteration: a third of max.poll.interval.ms (and each
  // call at most another third, see MakeApi), so an API outage never keeps
  // the one thread from Kafka's poll long enough to be dropped from the group.
  TainterConfig config = given;
  config.tainter.round_budget = MaxPollInterval(config.kafka.properties) / 3;
  config.kafka.rule_check = &rule_check;
  // Set below, once the informer and the tainter exist (Options is copied
  // into the consumer, so it calls through this holder).
  std::function<void(bool only_changes)> observe_nodes;
  config.kafka.before_decide = [&observe_nodes] {
    if (observe_nodes) observe_nodes(/*only_changes=*/true);
  };
  std::unique_ptr<TainterStack> stack =
      MakeTainterStack(config, "faultline-tainter", std::cerr, json);
  if (!stack) return 2;
  MetricsRegistry& metrics = stack->metrics;
  Tainter* tainter = stack->tainter.get();
  // The nodes are listed and then watched (tainter/watch/node_informer.h) on a
  // thread of their own, through a client of their own.
  auto watch_api = MakeApi(config, metrics);
  if (!watch_api) {
    std::cerr << "faultline-tainter: " << watch_api.error().message() << '\n';
    return 2;
  }
  NodeInformer informer(**watch_api, {.selector = config.tainter.node_selector}, metrics);
  tainter->set_watched(true);
  informer.Start();
  auto consumer = KafkaEventConsumer::Create(config.kafka, *tainter, metrics, RealClock());
  if (!consumer) {
    std::cerr << "faultline-tainter: " << consumer.error().message() << '\n';
    return 2;
  }
  // Fleet correlation (tainter/README.md): every partition, read apart
  // from the group, so accusations and incidents see every node.
  std::unique_ptr<FleetCorrelation> fleet;
  std::unique_ptr<KubeNodeApi> pod_api;
  std::unique_ptr<PodInformer> pod_informer;
  if (config.correlation.enabled) {
    auto made =
        FleetCorrelation::Create({.brokers = config.kafka.brokers,
                                  .events_topic = config.kafka.topic,
                                  .identity_topic = config.correlation.identity_topic,
                                  .group = config.kafka.group,
                                  .properties = config.kafka.properties,
                                  .rebuild_span = config.correlation.rebuild_span,
                                  .rebuild_max_messages = config.kafka.rebuild_max_messages},
                                 config.correlation.correlator, metrics, RealClock());
    if (!made) {
      std::cerr << "faultline-tainter: " << made.error().message() << '\n';
      return 2;
    }
    fleet = std::move(*made);
    fleet->Attach(*tainter);
    // Pod IPs and controllers for correlation, watched on a thread and
    // through a client of their own (tainter/watch/pod_informer.h).
    auto api = MakeApi(config, metrics);
    if (!api) {
      std::cerr << "faultline-tainter: " << api.error().message() << '\n';
      return 2;
    }
    pod_api = std::move(*api);
    pod_informer = std::make_unique<PodInformer>(*pod_api, PodInformer::Options{}, metrics);
    pod_informer->Start();
  }
  // Cordon and drain (tainter/remediation/remediation.h): only when the config names
  // them, through a client of its own that hands a PDB's 429 back.
  std::unique_ptr<KubeEvictionApi> eviction_api;
  std::unique_ptr<Remediator> remediator;
  std::map<std::string, std::string> rule_categories;  // rule id -> category, per rule set
  const RuleSet* categories_of = nullptr;
  if (config.remediation.Active()) {
    Result<KubeConfig> kube =
        LoadKubeConfigAuto(config.kubernetes.kubeconfig, config.kubernetes.context);
    if (!kube) {
      std::cerr << "faultline-tainter: " << kube.error().message() << '\n';
      return 2;
    }
    KubeHttpClient::Options http;
    http.qps = config.kubernetes.qps;
    http.burst = config.kubernetes.burst;
    http.request_timeout = config.kubernetes.request_timeout;
    http.call_deadline = std::min<std::chrono::milliseconds>(
        http.call_deadline, MaxPollInterval(config.kafka.properties) / 3);
    auto made = KubeEvictionApi::Create(std::move(*kube), http, RealClock(), metrics);
    if (!made) {
      std::cerr << "faultline-tainter: " << made.error().message() << '\n';
      return 2;
    }
    eviction_api = std::move(*made);
    RemediationOptions ro = config.remediation;
    ro.dry_run = config.tainter.dry_run;
    Remediator::View view;
    view.ready = [tainter] { return tainter->adopted(); };
    view.tainted_nodes = [tainter] { return tainter->policy().TaintedNodes(); };
    view.reasons = [tainter](const std::string& n) { return tainter->policy().ActiveReasons(n); };
    view.owns = [kafka = consumer->get()](const std::string& n) { return kafka->Owns(n); };
    view.category = [&rule_check, &rule_categories, &categories_of](const std::string& rule) {
      if (categories_of != &rule_check.rules()) {  // reloaded: read the categories again
        categories_of = &rule_check.rules();
        rule_categories.clear();
        for (const Rule& r : categories_of->rules()) rule_categories[r.id] = r.category;
      }
      auto it = rule_categories.find(rule);
      return it == rule_categories.end() ? std::string() : it->second;
    };
    remediator = std::make_unique<Remediator>(std::move(ro), std::move(view), *eviction_api,
                                              *stack->api, metrics, RealClock());
    LogWarning(
        "tainter", "remediation beyond the taint is on",
        {{"action", std::string(RemediationActionName(config.remediation.action))},
         {"drain_possible",
          config.remediation.action == RemediationAction::kDrain ||
              std::any_of(config.remediation.by_rule.begin(), config.remediation.by_rule.end(),
                          [](const auto& kv) { return kv.second == RemediationAction::kDrain; }) ||
              std::any_of(config.remediation.by_category.begin(),
                          config.remediation.by_category.end(),
                          [](const auto& kv) { return kv.second == RemediationAction::kDrain; })}});
  }
  observe_nodes = [&informer, &fleet, tainter](bool only_changes) {
    std::vector<NodeInformer::Change> changes = informer.Take();
    if (only_changes && changes.empty()) return;
    if (fleet) fleet->ObserveNodes(changes);
    tainter->Observe(std::move(changes));
  };
  std::atomic<bool> kube_ok{tainter->adopted()};
  KafkaEventConsumer* kafka = consumer->get();
  auto endpoint =
      HttpEndpoint::Start({.address = config.metrics_address}, metrics, [&kube_ok, kafka]() {
        Readiness r;
        if (!kafka->ready()) r.detail += "kafka not assigned or unreachable; ";
        if (!kube_ok.load()) r.detail += "kubernetes unreachable; ";
        r.ready = r.detail.empty();
        return r;
      });
  if (!endpoint) {
    std::cerr << "faultline-tainter: metrics_address " << config.metrics_address << ": "
              << endpoint.error().message() << '\n';
    return 2;
  }
  int sfd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    LogError("tainter", "signalfd failed");
    return 1;
  }
  LogInfo("tainter", "started",
          {{"metrics", config.metrics_address}, {"dry_run", config.tainter.dry_run}});
  const Clock& clock = RealClock();  // the one the consumer and the tainter read
  auto next_tick = clock.MonotonicNow();
  std::string rules_fingerprint = RulePackFingerprint(config.rules);
  auto next_rules_check = next_tick + kRulePackCheckInterval;
  bool subscribed = false;
  for (;;) {
    signalfd_siginfo info{};
    if (read(sfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      if (info.ssi_signo == SIGHUP) {
        ReloadRules(config, rule_check, "SIGHUP");
        continue;
      }
      LogInfo("tainter", "stopping", {{"signal", static_cast<int>(info.ssi_signo)}});
      break;
    }
    if (clock.MonotonicNow() >= next_rules_check) {
      if (std::string now = RulePackFingerprint(config.rules); now != rules_fingerprint) {
        rules_fingerprint = std::move(now);
        ReloadRules(config, rule_check, "files changed");
      }
      next_rules_check = clock.MonotonicNow() + kRulePackCheckInterval;
    }
    tainter->BeginRound();
    observe_nodes(/*only_changes=*/false);
    if (fleet) {
      if (pod_informer) fleet->ObservePods(pod_informer->Take());
      fleet->Poll(std::chrono::milliseconds(0));
    }
    // Nothing is consumed before the nodes were read: the valve counts
    // them, and a decision needs the node's state.
    // With correlation, also not before the identities are read: a
    // reporter's line naming a peer must resolve to be set aside.
    if (!subscribed && tainter->adopted() && (!fleet || fleet->ready())) {
      if (Status s = (*consumer)->Start(); !s.ok()) {
        LogError("tainter", "cannot subscribe", {{"error", s.ToString()}});
        return 1;
      }
      subscribed = true;
    }
    if (subscribed) {
      (*consumer)->Poll(std::chrono::milliseconds(100));
    } else {
      usleep(100'000);
    }
    if (clock.MonotonicNow() >= next_tick) {
      tainter->Tick();
      if (remediator) remediator->Tick();
      if (fleet) {
        fleet->Tick(*tainter, [kafka](const std::string& key) { return kafka->Owns(key); });
      }
      (*consumer)->Commit();
      kube_ok = tainter->adopted() && tainter->api_reachable() && !informer.failing();
      next_tick = clock.MonotonicNow() + std::chrono::seconds(1);
    }
  }
  close(sfd);
  (*consumer)->Close();
  if (fleet) fleet->Close();
  if (pod_informer) pod_informer->Stop();
  informer.Stop();
  LogInfo("tainter", "stopped",
          {{"pending_decisions", tainter->pending()},
           {"events", metrics.CounterValue("faultline_tainter_events_consumed_total")},
           {"taints_added", metrics.CounterValue("faultline_tainter_taints_added_total")}});
  return 0;
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
  const int rc = RunDaemon(config, rule_check, signals, flags->json);
  curl_global_cleanup();
  return rc;
}
