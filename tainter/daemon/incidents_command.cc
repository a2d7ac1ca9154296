// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/incidents_command.h"

#include <thread>

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/time_format.h"
#include "tainter/correlation/correlation_consumer.h"
#include "tainter/daemon/node_commands.h"
#include "tainter/daemon/tainter_config.h"
#include "tainter/daemon/tainter_stack.h"
#include "tainter/watch/pod_informer.h"

namespace faultline {
namespace {

constexpr char kHelp[] =
    R"(usage: faultline-tainter incidents --config FILE [--since DURATION] [--kubeconfig PATH]

The incidents of the last DURATION (default 1h): events from many nodes of
one job within a short window (NCCL watchdog timeouts, NCCL errors), grouped,
each with the node it is attributed to (hardware evidence on one of its nodes:
an Xid, an IB port down, a PCIe fatal error, or its peers' accusations).
Rebuilt from Kafka as the daemon rebuilds them; reads, writes nothing.

  --config FILE       the tainter config (kafka, correlation, kubernetes)
  --since DURATION    how far back to read (e.g. 30m, 6h)
  --kubeconfig PATH   resolve addresses with the Nodes' status.addresses too
)";

}  // namespace

int RunIncidentsCommand(const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err) {
  std::string config_path;
  std::string kubeconfig;
  std::chrono::seconds since{std::chrono::hours(1)};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      out << kHelp;
      return 0;
    }
    if (i + 1 >= args.size()) {
      err << "faultline-tainter incidents: unknown argument or missing value '" << a << "'\n"
          << kHelp;
      return 2;
    }
    const std::string& v = args[++i];
    if (a == "--config" || a == "-c") {
      config_path = v;
    } else if (a == "--kubeconfig") {
      kubeconfig = v;
    } else if (a == "--since") {
      auto d = ParseDuration(v);
      if (!d || d->count() <= 0) {
        err << "faultline-tainter incidents: --since: bad duration '" << v << "'\n";
        return 2;
      }
      since = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else {
      err << "faultline-tainter incidents: unknown argument '" << a << "'\n" << kHelp;
      return 2;
    }
  }
  if (config_path.empty()) {
    err << "faultline-tainter incidents: --config is required\n" << kHelp;
    return 2;
  }
  std::optional<TainterConfig> config = LoadTainterConfig(config_path, err, true);
  if (!config) return 2;
  if (!kubeconfig.empty()) config->kubernetes.kubeconfig = kubeconfig;
  SetLogLevel(std::max(config->log_level, LogLevel::kWarning));

  MetricsRegistry metrics;
  Correlator correlator(config->correlation.correlator);
  // Node addresses, when the API server answers (identities alone resolve
  // what the agents published).
  if (auto api = MakeApi(*config, metrics); api) {
    if (auto nodes = (*api)->ListNodes(config->tainter.node_selector); nodes) {
      for (const NodeInfo& n : *nodes) {
        correlator.addresses().Set(AddressBook::Witness::kNodeStatus, n.name, n.addresses);
      }
    } else {
      err << "faultline-tainter incidents: warning: cannot list nodes (" << nodes.error().message()
          << "); resolving by published identities only\n";
    }
    // Pod IPs and controllers (one list, as the daemon's pod watch starts).
    if (auto pods = (*api)->ListPodsAt(PodKind::kDefaultSelector); pods) {
      correlator.pods().Replace(pods->pods);
    } else {
      err << "faultline-tainter incidents: warning: cannot list pods (" << pods.error().message()
          << "); jobs are named from pod names, pod IPs do not resolve\n";
    }
  }
  CorrelationConsumer::Options o;
  o.brokers = config->kafka.brokers;
  o.events_topic = config->kafka.topic;
  o.identity_topic = config->correlation.identity_topic;
  o.group = config->kafka.group;
  o.properties = config->kafka.properties;
  o.rebuild_span = since;
  o.rebuild_max_messages = config->kafka.rebuild_max_messages;
  const Clock& clock = RealClock();  // one clock for the history's span, the wait and "now"
  auto consumer = CorrelationConsumer::Create(o, correlator, metrics, clock);
  if (!consumer) {
    err << "faultline-tainter incidents: " << consumer.error().message() << '\n';
    return 2;
  }
  if (Status s = (*consumer)->Start(); !s.ok()) {
    err << "faultline-tainter incidents: " << s.message() << '\n';
    return 1;
  }
  const auto deadline = clock.MonotonicNow() + std::chrono::seconds(30);
  while (!(*consumer)->caught_up()) {
    if (clock.MonotonicNow() > deadline) {
      err << "faultline-tainter incidents: Kafka did not deliver the history within 30 s\n";
      return 1;
    }
    (*consumer)->Poll(std::chrono::milliseconds(200), 10'000);
  }
  const auto now = clock.Now();
  correlator.TakeBlames(now);  // accusations are evidence too
  std::vector<Incident> closed = correlator.TakeIncidents(now);
  std::vector<Incident> open = correlator.OpenIncidents();
  (*consumer)->Close();
  if (closed.empty() && open.empty()) {
    out << "no incidents in the last " << FormatDuration(since) << '\n';
    return 0;
  }
  for (const Incident& inc : closed) out << FormatIncident(inc) << '\n';
  for (const Incident& inc : open) out << FormatIncident(inc) << "\n    (still open)\n";
  return 0;
}

}  // namespace faultline
