// SPDX-License-Identifier: Apache-2.0
#include "collector/standalone/standalone.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/log.h"
#include "collector/agent/agent_config.h"
#include "collector/agent/agent_stack.h"
#include "collector/checks/checks_config.h"
#include "collector/standalone/own_node_api.h"
#include "collector/standalone/standalone_config.h"
#include "collector/standalone/standalone_sink.h"
#include "tainter/apply/dry_run_node_api.h"
#include "tainter/apply/node_applier.h"
#include "tainter/kube/kube_config.h"
#include "tainter/kube/kube_node_api.h"

namespace faultline {
namespace {

bool Writable(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return !ec && ::access(dir.c_str(), W_OK) == 0;
}

// /var/lib/faultline needs root; a user trying standalone mode should not
// have to be. XDG's state directory is where per-user state belongs.
std::string StateDirFallback() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {  // NOLINT
    return std::string(xdg) + "/faultline";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {  // NOLINT
    return std::string(home) + "/.local/state/faultline";
  }
  return "/tmp/faultline-" + std::to_string(::getuid());
}

void SetStateDir(AgentConfig& c, const std::string& dir) {
  c.state_dir = dir;
  c.kmsg.state_dir = dir;
  c.journal.state_dir = dir;
  c.podlog.state_dir = dir;
  c.ibcounters.state_dir = dir;
}

std::string RandomMarker() {
  std::random_device rd;
  std::ostringstream out;
  out << "faultline-demo-" << std::hex << rd() << rd();
  return out.str();
}

// The demo's lines, as the NVIDIA driver prints them, with a marker that
// tells them apart from anything else in the ring. The application fault
// comes first: the policy records at most one Event per node and rule every
// event_interval, and both lines are rule nvidia.xid, so after the taint's
// Event an Xid 13 Event would be held back.
std::vector<std::string> DemoLines(const std::string& marker) {
  return {
      "NVRM: Xid (PCI:0000:3b:00): 13, pid=0, name=faultline-demo, Graphics Exception: "
      "ESR 0x504730=0x0 " +
          marker,
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, name=faultline-demo, GPU has fallen off the bus. " +
          marker,
  };
}

// One open per line: the kernel rate-limits writes per open file.
Status WriteKmsg(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return UnavailableError("open " + path + ": " + std::strerror(errno));
  const std::string record = "<4>" + line + "\n";
  const ssize_t n = ::write(fd, record.data(), record.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(record.size())) {
    return UnavailableError("write " + path + ": " + std::strerror(err));
  }
  return OkStatus();
}

// Opened, not access()ed: reading also needs CAP_SYSLOG where
// kernel.dmesg_restrict=1, which file permissions do not show.
bool KmsgUsable(const std::string& path) {
  for (int mode : {O_RDONLY | O_NONBLOCK, O_WRONLY}) {
    const int fd = ::open(path.c_str(), mode | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
  }
  return true;
}

// Mode and credentials: returns the KubeConfig to write with, nullopt for a
// dry run (with `why` for the one line that says so), or an error.
Result<std::optional<KubeConfig>> DiscoverKube(const KubernetesSettings& s, std::string& why) {
  Result<KubeConfig> kube = LoadKubeConfigAuto(s.kubeconfig, s.context);
  if (kube) return std::optional<KubeConfig>(std::move(*kube));
  const StatusCode code = kube.error().code();
  if (s.kubeconfig.empty() &&
      (code == StatusCode::kFailedPrecondition || code == StatusCode::kNotFound)) {
    why =
        "no Kubernetes credentials found (no kubernetes.kubeconfig, no $KUBECONFIG, not in a "
        "cluster, no ~/.kube/config)";
    return std::optional<KubeConfig>();
  }
  return kube.error();  // a kubeconfig that exists but is unusable: say so, do not guess
}

// The demo reads only its own lines: a fresh state directory (no
// checkpoints to resume), /dev/kmsg from its end (old ring contents are not
// reported), or, where /dev/kmsg cannot be written, a file it writes itself.
// Returns the temporary directory (removed at the end), empty on failure.
std::string MakeDemoConfig(StandaloneAgentConfig& c, std::string& demo_file) {
  char dir[] = "/tmp/faultline-demo-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return "";
  SetStateDir(c, dir);
  c.metrics_address.clear();
  c.journal_enabled = c.podlog_enabled = c.ibcounters_enabled = false;
  c.files.clear();
  c.kmsg.start_policy = KmsgSource::StartPolicy::kEnd;
  c.kmsg_enabled = KmsgUsable(c.kmsg.device_path);
  if (!c.kmsg_enabled) {
    demo_file = c.state_dir + "/sample-kmsg.log";
    std::ofstream(demo_file).flush();
    c.files.push_back({demo_file, /*follow=*/true, Origin::kKernel});
  }
  c.shutdown_grace = std::chrono::seconds(5);
  c.standalone.dry_run = true;
  c.rules.paths.clear();  // built-in rules only: the demo shows what ships
  c.rules.builtin = true;
  return dir;
}

// Writes the demo's lines where the agent reads them, waits up to 10 s for
// their decisions, and says what happened. 0 when every line was decided
// and a patch printed.
int RunDemo(const AgentConfig& config, const std::string& demo_file, const std::string& marker,
            const std::atomic<int>& demo_handled, const DryRunNodeApi& dry_api,
            const sigset_t& signals, const Clock& clock) {
  const std::vector<std::string> lines = DemoLines(marker);
  std::cout << "demo: writing a fake Xid 13 (application fault) and Xid 79 (GPU fell off the "
               "bus) to "
            << (demo_file.empty() ? config.kmsg.device_path
                                  : demo_file + " (" + config.kmsg.device_path +
                                        " cannot be opened for reading and writing here)")
            << ", marker " << marker << '\n';
  std::cout.flush();
  for (const std::string& line : lines) {
    Status s = OkStatus();
    if (demo_file.empty()) {
      s = WriteKmsg(config.kmsg.device_path, line);
    } else {
      std::ofstream out(demo_file, std::ios::app);
      out << line << '\n';
      if (!out.flush()) s = UnavailableError("cannot write " + demo_file);
    }
    if (!s.ok()) std::cerr << "faultline-agent: demo: " << s.ToString() << '\n';
  }
  const auto deadline = clock.MonotonicNow() + std::chrono::seconds(10);
  while (demo_handled.load() < static_cast<int>(lines.size()) && clock.MonotonicNow() < deadline) {
    const timespec tick{0, 50'000'000};
    const int sig = sigtimedwait(&signals, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) break;
  }
  const int handled = demo_handled.load();
  std::cout << "\ndemo: " << handled << " of " << lines.size() << " fake faults detected and "
            << "decided; " << dry_api.patches() << " node patch(es) and " << dry_api.events()
            << " Event(s) printed above, nothing sent.\n";
  const int demo_rc = handled == static_cast<int>(lines.size()) && dry_api.patches() > 0 ? 0 : 1;
  if (demo_rc != 0) std::cout << "demo: FAILED: not everything was detected within 10 s\n";
  return demo_rc;
}

// Expected GPU counts from this node's labels
// (checks.gpu_inventory.expected_labels), read once.
void ReadExpectedCountLabels(OwnNodeApi& own_api, const std::string& node, ChecksConfig& checks) {
  if (checks.gpu_expected_labels.empty()) return;
  if (Result<NodeInfo> self = own_api.GetNode(node); self.ok()) {
    ApplyNodeLabels(self->labels, checks);
  } else {
    LogWarning("standalone",
               "cannot read this node's labels; expected GPU counts from the baseline",
               {{"node", node}, {"error", self.error().ToString()}});
    checks.node_labels_applied = true;  // tried: said why above
  }
}

// The run's one summary on stdout: the node, rules, sources and whether it
// writes (LIVE) or prints (DRY RUN), and why.
void SayWhatThisRunDoes(const StandaloneAgentConfig& config, std::size_t rules,
                        const std::optional<KubeConfig>& kube, bool demo, bool dry_run,
                        const std::string& no_kube_why) {
  const std::string& node = config.node_name;
  std::cout << "faultline standalone agent on node " << node << ": " << rules << " rules; sources:";
  if (config.kmsg_enabled) std::cout << " kmsg";
  if (config.journal_enabled) std::cout << " journal";
  if (config.podlog_enabled) std::cout << " podlog";
  if (config.ibcounters_enabled) std::cout << " ibcounters";
  for (const FileSourceConfig& f : config.files) std::cout << " file:" << f.path;
  std::cout << '\n';
  if (!kube && !demo) {
    std::cout << "DRY RUN: " << no_kube_why << "; printing each patch it would send.\n";
    LogWarning("standalone", "dry run: no Kubernetes credentials found", {{"detail", no_kube_why}});
  } else if (dry_run) {
    std::cout << "DRY RUN: printing each patch it would send"
              << (kube ? " (reading node " + node + " from " + kube->Describe() + ")" : "")
              << ".\n";
  } else {
    std::cout << "LIVE: tainting node " << node << " through " << kube->Describe() << '\n';
  }
  std::cout.flush();
}

}  // namespace

int RunStandalone(const AgentFlags& flags, const sigset_t& signals) {
  const Clock& clock = RealClock();  // the one every part below reads
  // 1. Config, rules and Kubernetes credentials: every problem before anything starts.
  std::optional<StandaloneAgentConfig> config =
      LoadStandaloneAgentConfig(flags.config_path, AgentMode::kStandalone, std::cerr, flags.json);
  if (!config) return 2;
  std::string demo_file;
  std::string demo_dir;
  if (flags.demo) {
    demo_dir = MakeDemoConfig(*config, demo_file);
    if (demo_dir.empty()) {
      std::cerr << "faultline-agent: demo: cannot create a directory in /tmp\n";
      return 1;
    }
    SetLogLevel(LogLevel::kWarning);  // the demo's story is on stdout
  } else {
    SetLogLevel(config->log_level);
    if (!Writable(config->state_dir)) {
      const std::string fallback = StateDirFallback();
      LogWarning("standalone", "state_dir is not writable; using a fallback",
                 {{"state_dir", config->state_dir}, {"fallback", fallback}});
      SetStateDir(*config, fallback);
      if (!Writable(fallback)) {
        std::cerr << "faultline-agent: error: neither state_dir nor " << fallback
                  << " is writable\n";
        return 2;
      }
    }
  }
  std::unique_ptr<AgentStack> stack = AgentStack::Create(*config, std::cerr, clock);
  if (!stack) return 2;

  const StandaloneSettings& sc = config->standalone;
  const bool dry_run = flags.dry_run || sc.dry_run || flags.demo;
  std::optional<KubeConfig> kube;
  std::string no_kube_why;
  if (!flags.demo) {
    Result<std::optional<KubeConfig>> found = DiscoverKube(sc.kubernetes, no_kube_why);
    if (!found) {
      std::cerr << "faultline-agent: error: Kubernetes config: " << found.error().message() << '\n';
      return 2;
    }
    kube = std::move(*found);
  }

  // 2. The sink (the tainter over this node), then the stack over it;
  // destroyed in reverse.
  const std::string& node = config->node_name;
  MetricsRegistry& registry = stack->registry();
  std::unique_ptr<KubeNodeApi> kube_api;
  std::unique_ptr<OwnNodeApi> own_api;
  if (kube) {
    KubeNodeApi::Options ko;
    ko.http.qps = sc.kubernetes.qps;
    ko.http.burst = sc.kubernetes.burst;
    ko.http.request_timeout = sc.kubernetes.request_timeout;
    Result<std::unique_ptr<KubeNodeApi>> api = KubeNodeApi::Create(*kube, ko, clock, registry);
    if (!api) {
      std::cerr << "faultline-agent: error: Kubernetes client: " << api.error().message() << '\n';
      return 2;
    }
    kube_api = std::move(*api);
    own_api = std::make_unique<OwnNodeApi>(node, *kube_api, *kube_api);
  }
  std::unique_ptr<DryRunNodeApi> dry_api;
  std::unique_ptr<OwnNodeApi> own_dry_api;
  OwnNodeApi* api = own_api.get();
  if (dry_run || !kube) {
    dry_api = std::make_unique<DryRunNodeApi>(node, std::cout, clock, own_api.get());
    own_dry_api = std::make_unique<OwnNodeApi>(node, *dry_api, *dry_api);
    api = own_dry_api.get();
  }

  // Before the check source opens in Assemble below.
  if (own_api) ReadExpectedCountLabels(*own_api, node, config->checks);

  // A dry run swaps the API (DryRunNodeApi) rather than setting
  // Tainter::Options::dry_run, so the patches are printed. The agent has
  // nodes and Events only: no PodApi (no pod Events) and no shared valve
  // record (the valve counts in memory, for this one node).
  Result<std::unique_ptr<Tainter>> tainter =
      Tainter::Create(sc.tainter, ApplierApis{*api, *api}, registry, clock);
  if (!tainter) {
    std::cerr << "faultline-agent: error: standalone: " << tainter.error().message() << '\n';
    return 2;
  }
  if (Status s = (*tainter)->AdoptAll(); !s.ok()) {
    // Not fatal: Tick() retries until the API server answers.
    LogWarning("standalone", "cannot read this node yet",
               {{"node", node}, {"error", s.ToString()}});
  } else if (!(*tainter)->policy().Knows(node)) {
    // Usually node_name differs from the Node's name (set NODE_NAME).
    std::cout << "warning: the API server has no node named " << node
              << "; faults will be logged but no node tainted (set node_name or NODE_NAME)\n";
    LogWarning("standalone", "this node is not in the cluster", {{"node", node}});
  }

  // The demo waits for its own lines' decisions.
  const std::string marker = flags.demo ? RandomMarker() : "";
  std::atomic<int> demo_handled{0};
  StandaloneSink::Options sink_options;
  if (dry_api) sink_options.report = &std::cout;
  if (flags.demo) {
    sink_options.on_handled = [&demo_handled, &marker](const FaultEvent& e) {
      if (e.message.find(marker) != std::string::npos) ++demo_handled;
    };
  }
  StandaloneSink sink(**tainter, clock, sink_options);

  AgentStack::SinkChecks checks;
  checks.not_ready = [&sink]() -> std::optional<std::string> {
    if (!sink.api_reachable()) return "Kubernetes API unreachable";
    return std::nullopt;
  };
  AgentStack::Options stack_options;
  stack_options.watch_rules = !flags.demo;
  stack_options.endpoint_required = false;
  if (Status s = stack->Assemble(sink, checks, stack_options); !s.ok()) {
    std::cerr << "faultline-agent: error: " << s.message() << '\n';
    if (std::string hint = AssembleErrorHint(s, *config); !hint.empty()) {
      std::cerr << "  (" << hint << ")\n";
    }
    return AgentStack::ExitCode(s);
  }

  // 3. Say what this run will do, once, where the user looks.
  SayWhatThisRunDoes(*config, stack->rules_loaded(), kube, flags.demo, dry_run, no_kube_why);

  stack->Start({{"mode", "standalone"}, {"dry_run", dry_api != nullptr}});

  int demo_rc = 0;
  if (flags.demo) {
    demo_rc = RunDemo(*config, demo_file, marker, demo_handled, *dry_api, signals, clock);
  } else {
    // 4. Run until told to stop.
    stack->WaitForStop(signals);
  }

  // 5. Stop: sources, drain, the tainter's pending writes until the grace, commit.
  const std::size_t undelivered = stack->Stop();
  if (flags.demo) {
    std::error_code ec;
    std::filesystem::remove_all(demo_dir, ec);
    return demo_rc;
  }
  return undelivered > 0 ? 1 : 0;
}

}  // namespace faultline
