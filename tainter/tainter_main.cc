// SPDX-License-Identifier: Apache-2.0
// faultline-tainter: Kafka -> policy -> Kubernetes taints.
//
//   faultline-tainter --config FILE [--dry-run] [--log-level L]
//   faultline-tainter nodes [--config FILE]
//   faultline-tainter untaint NODE [--reason TEXT] [--config FILE]
//
// Exit codes: 0 clean stop, 1 runtime failure, 2 bad flags or config.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/time_format.h"
#include "endpoint/http_endpoint.h"
#include "tainter/event_consumer.h"
#include "tainter/kube/kube_config.h"
#include "tainter/kube/kube_node_api.h"
#include "tainter/tainter.h"
#include "tainter/tainter_config.h"

namespace faultline {
namespace {

constexpr char kUsage[] =
    "usage: faultline-tainter --config FILE [--dry-run] [--log-level debug|info|warn|error]\n"
    "       faultline-tainter nodes [--config FILE]\n"
    "       faultline-tainter untaint NODE [--reason TEXT] [--config FILE]\n";

struct Flags {
  std::string command = "run";  // run | nodes | untaint
  std::string config;
  std::string node;
  std::string reason;
  bool dry_run = false;
  std::string log_level;
};

Result<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::size_t i = 0;
  if (i < args.size() && (args[i] == "nodes" || args[i] == "untaint")) f.command = args[i++];
  for (; i < args.size(); ++i) {
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
    } else if (a == "--reason") {
      auto v = value(a);
      if (!v) return v.error();
      f.reason = *v;
    } else if (a == "--log-level") {
      auto v = value(a);
      if (!v) return v.error();
      f.log_level = *v;
    } else if (a == "--dry-run") {
      f.dry_run = true;
    } else if (a == "-h" || a == "--help") {
      return InvalidArgumentError("");
    } else if (f.command == "untaint" && f.node.empty() && a[0] != '-') {
      f.node = a;
    } else {
      return InvalidArgumentError("unknown argument '" + a + "'");
    }
  }
  if (f.command == "run" && f.config.empty()) return InvalidArgumentError("--config is required");
  if (f.command == "untaint" && f.node.empty()) return InvalidArgumentError("untaint needs a NODE");
  return f;
}

// Credentials in the one documented order (LoadKubeConfigAuto), the same
// for the daemon, `nodes` and `untaint`.
Result<std::unique_ptr<KubeNodeApi>> MakeApi(const TainterConfig& config,
                                             MetricsRegistry& metrics) {
  Result<KubeConfig> kube =
      LoadKubeConfigAuto(config.kubernetes.kubeconfig, config.kubernetes.context);
  if (!kube) return kube.error();
  KubeNodeApi::Options o;
  o.http.qps = config.kubernetes.qps;
  o.http.burst = config.kubernetes.burst;
  o.http.request_timeout = config.kubernetes.request_timeout;
  LogInfo("tainter", "kubernetes", {{"api", kube->Describe()}});
  return KubeNodeApi::Create(std::move(*kube), o, RealClock(), metrics);
}

// The Kubernetes client and the Tainter over it, which every subcommand
// needs. Members are destroyed in reverse order: the metrics outlive both.
struct TainterStack {
  MetricsRegistry metrics;
  std::unique_ptr<KubeNodeApi> api;
  std::unique_ptr<Tainter> tainter;
};

// nullptr, with the reason on stderr, when either cannot be made.
std::unique_ptr<TainterStack> MakeTainterStack(const TainterConfig& config) {
  auto stack = std::make_unique<TainterStack>();
  auto api = MakeApi(config, stack->metrics);
  if (!api) {
    std::cerr << "faultline-tainter: " << api.error().message() << '\n';
    return nullptr;
  }
  stack->api = std::move(*api);
  auto tainter = Tainter::Create(config.tainter, *stack->api, stack->metrics, RealClock());
  if (!tainter) {
    std::cerr << "faultline-tainter: " << tainter.error().message() << '\n';
    return nullptr;
  }
  stack->tainter = std::move(*tainter);
  return stack;
}

int RunNodes(const TainterConfig& config) {
  std::unique_ptr<TainterStack> stack = MakeTainterStack(config);
  if (!stack) return 2;
  Tainter* tainter = stack->tainter.get();
  auto nodes = tainter->ListTainted();
  if (!nodes) {
    std::cerr << "faultline-tainter: cannot list nodes: " << nodes.error().ToString() << '\n';
    return 1;
  }
  std::printf("%-32s %-28s %s\n", "NODE", "SINCE", "REASONS");
  for (const TaintedNodeReport& n : *nodes) {
    std::string reasons;
    for (const Reason& r : n.reasons) {
      if (!reasons.empty()) reasons += "; ";
      reasons += r.rule;
      if (!r.summary.empty()) reasons += " (" + r.summary + ")";
      if (r.expires_at) reasons += " until " + FormatRfc3339(*r.expires_at);
    }
    const std::string since =
        n.since.time_since_epoch().count() == 0 ? "-" : FormatRfc3339(n.since);
    std::printf("%-32s %-28s %s\n", n.node.c_str(), since.c_str(), reasons.c_str());
  }
  return 0;
}

int RunUntaint(const TainterConfig& config, const Flags& flags) {
  std::unique_ptr<TainterStack> stack = MakeTainterStack(config);
  if (!stack) return 2;
  Tainter* tainter = stack->tainter.get();
  Status s = tainter->Untaint(flags.node, flags.reason);
  if (!s.ok()) {
    std::cerr << "faultline-tainter: untaint " << flags.node << ": " << s.ToString() << '\n';
    return s.code() == StatusCode::kFailedPrecondition ? 0 : 1;
  }
  std::printf("%s: faultline's taint lifted%s\n", flags.node.c_str(),
              config.tainter.dry_run ? " (dry run: nothing sent)" : "");
  return 0;
}

int RunDaemon(const TainterConfig& config, const sigset_t& signals) {
  std::unique_ptr<TainterStack> stack = MakeTainterStack(config);
  if (!stack) return 2;
  MetricsRegistry& metrics = stack->metrics;
  Tainter* tainter = stack->tainter.get();
  if (Status s = tainter->AdoptAll(); !s.ok()) {
    // Not fatal: Tick() keeps trying, and nothing is decided for a node
    // before its state was read.
    LogWarning("tainter", "cannot list nodes at start; will retry", {{"error", s.ToString()}});
  }
  auto consumer = KafkaEventConsumer::Create(config.kafka, *tainter, metrics, RealClock());
  if (!consumer) {
    std::cerr << "faultline-tainter: " << consumer.error().message() << '\n';
    return 2;
  }
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
  if (Status s = (*consumer)->Start(); !s.ok()) {
    LogError("tainter", "cannot subscribe", {{"error", s.ToString()}});
    return 1;
  }
  int sfd = signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    LogError("tainter", "signalfd failed");
    return 1;
  }
  LogInfo("tainter", "started",
          {{"metrics", config.metrics_address}, {"dry_run", config.tainter.dry_run}});
  auto next_tick = std::chrono::steady_clock::now();
  for (;;) {
    signalfd_siginfo info{};
    if (read(sfd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
      LogInfo("tainter", "stopping", {{"signal", static_cast<int>(info.ssi_signo)}});
      break;
    }
    (*consumer)->Poll(std::chrono::milliseconds(100));
    if (std::chrono::steady_clock::now() >= next_tick) {
      tainter->Tick();
      (*consumer)->Commit();
      kube_ok = tainter->adopted() && tainter->api_reachable();
      next_tick = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
  }
  close(sfd);
  (*consumer)->Close();
  LogInfo("tainter", "stopped",
          {{"pending_decisions", tainter->pending()},
           {"events", metrics.CounterValue("faultline_tainter_events_consumed_total")},
           {"taints_added", metrics.CounterValue("faultline_tainter_taints_added_total")}});
  return 0;
}

}  // namespace
}  // namespace faultline

int main(int argc, char** argv) {
  using namespace faultline;  // NOLINT(google-build-using-namespace): main only
  // Signals are taken synchronously through a signalfd by the one thread
  // that owns everything; block them before librdkafka starts its threads.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  Result<Flags> flags = ParseFlags(argc, argv);
  if (!flags) {
    if (!flags.error().message().empty()) {
      std::cerr << "faultline-tainter: " << flags.error().message() << '\n';
    }
    std::cerr << kUsage;
    return 2;
  }
  TainterConfig config;
  if (!flags->config.empty()) {
    std::optional<TainterConfig> loaded = LoadTainterConfig(flags->config, std::cerr);
    if (!loaded) return 2;
    config = std::move(*loaded);
  }
  if (flags->dry_run) config.tainter.dry_run = true;
  if (!flags->log_level.empty() && !ParseLogLevel(flags->log_level, &config.log_level)) {
    std::cerr << "faultline-tainter: --log-level must be debug, info, warn or error\n" << kUsage;
    return 2;
  }
  SetLogLevel(config.log_level);
  if (flags->command == "run" && config.kafka.brokers.empty()) {
    std::cerr << flags->config << ":1:1: error: 'kafka.brokers' is required\n";
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  int rc = 0;
  if (flags->command == "nodes") {
    rc = RunNodes(config);
  } else if (flags->command == "untaint") {
    rc = RunUntaint(config, *flags);
  } else {
    rc = RunDaemon(config, signals);
  }
  curl_global_cleanup();
  return rc;
}
