// SPDX-License-Identifier: Apache-2.0
// The operator's commands on nodes, one implementation behind two names:
// `faultline-tainter nodes|untaint|explain` and the kubectl plugin
// `kubectl faultline nodes|untaint|explain` (the kubectl-faultline program).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/diagnostics.h"
#include "base/metrics.h"
#include "base/version.h"
#include "tainter/kube/kube_node_api.h"
#include "tainter/apply/node_applier.h"
#include "tainter/daemon/tainter_config.h"

namespace faultline {

// The Kubernetes client and the Tainter over it, which the daemon and every
// subcommand need. Members are destroyed in reverse order: the metrics
// outlive both.
struct TainterStack {
  const Clock* clock = &RealClock();  // what the client, the Tainter and `explain` read
  MetricsRegistry metrics;
  std::unique_ptr<KubeNodeApi> api;
  std::unique_ptr<Tainter> tainter;
};

// Credentials in the one order of LoadKubeConfigAuto (tainter/kube/kube_config.h):
// the config's kubernetes.kubeconfig (or --kubeconfig), $KUBECONFIG's first
// readable file, the in-cluster service account, ~/.kube/config. nullptr,
// with the reason on `err` prefixed by `program`, when either part cannot be
// made; with `json` (--format json), as one JSON array of diagnostics: the
// kubeconfig's own (file:line:col, code) or one C000 naming what failed.
std::unique_ptr<TainterStack> MakeTainterStack(const TainterConfig& config,
                                               std::string_view program, std::ostream& err,
                                               bool json = false);

// A Kubernetes client for the tainter's config: the credentials looked up
// in the one documented order (LoadKubeConfigAuto), its QPS, burst and
// timeout. The daemon makes a second one for its node watch, so a long
// watch never waits behind a write. `problems`: as LoadKubeconfig's.
Result<std::unique_ptr<KubeNodeApi>> MakeApi(const TainterConfig& config, MetricsRegistry& metrics,
                                             const Clock& clock = RealClock(),
                                             Diagnostics* problems = nullptr);

// True for the subcommands RunNodeCommand() runs: nodes, untaint, explain.
bool IsNodeCommand(std::string_view arg);

// Runs `args` = {SUBCOMMAND, ARGS...}; `program` names the command in help
// and messages ("faultline-tainter", "kubectl faultline"). No subcommand, or
// -h/--help alone: the overview. Exit status: 0 done (also: untaint of a
// node without faultline's taint, explain of an untainted node), 1 the node
// does not exist or the API server failed, 2 bad usage, config or
// credentials. The caller initialises libcurl.
int RunNodeCommand(std::string_view program, const std::vector<std::string>& args,
                   std::ostream& out, std::ostream& err);

// The libraries the tainter's programs contain, for --version.
std::vector<VersionComponent> TainterVersions();

}  // namespace faultline
