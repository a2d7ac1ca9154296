// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/node_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <curl/curl.h>
#include <librdkafka/rdkafka.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/time_format.h"
#include "tainter/daemon/node_reports.h"
#include "tainter/daemon/tainter_stack.h"

namespace faultline {
namespace {

struct NodeFlags {
  std::string command;  // nodes | untaint | explain
  std::string config;
  std::string kubeconfig;
  std::string context;
  std::string node;
  std::string reason;
  bool dry_run = false;
  bool help = false;
};

std::string Overview(std::string_view program) {
  const std::string p(program);
  return "usage: " + p + " nodes [FLAGS]\n       " + p + " explain NODE [FLAGS]\n       " + p +
         " untaint NODE [--reason TEXT] [FLAGS]\n"
         "\n"
         "  nodes          the nodes carrying faultline's taint, since when, and why\n"
         "  explain NODE   why NODE is tainted: each reason's rule, summary, log line,\n"
         "                 first/last seen and expiry, and what would lift the taint\n"
         "  untaint NODE   lift faultline's taint by hand (never another taint)\n"
         "\n"
         "FLAGS:\n"
         "  --kubeconfig PATH  the kubeconfig (default: the first readable file in $KUBECONFIG,\n"
         "                     else the in-cluster service account, else ~/.kube/config)\n"
         "  --context NAME     a context of the kubeconfig (default: its current-context)\n"
         "  --config FILE      a faultline-tainter config, for a taint key or annotation\n"
         "                     other than faultline.dev/faulty and faultline.dev/reasons\n"
         "  -h, --help         help for the subcommand\n"
         "\n"
         "nodes and explain only read (get/list on nodes); untaint patches the node and\n"
         "creates an Event. Run `" +
         p + " SUBCOMMAND --help` for details.\n";
}

std::string Help(std::string_view program, std::string_view command) {
  const std::string p(program);
  const std::string flags =
      "  --kubeconfig PATH, --context NAME, --config FILE: as in `" + p + " --help`\n";
  if (command == "nodes") {
    return "usage: " + p +
           " nodes [--kubeconfig PATH] [--context NAME] [--config FILE]\n"
           "\n"
           "Lists the nodes carrying faultline's taint, with the time of the first\n"
           "reason and every reason (rule, summary, expiry), as the API server has them.\n"
           "Needs only get/list on nodes.\n\n" +
           flags +
           "\nExit status: 0 listed; 1 the API server failed; 2 bad flags, config or\n"
           "credentials.\n";
  }
  if (command == "explain") {
    return "usage: " + p +
           " explain NODE [--kubeconfig PATH] [--context NAME] [--config FILE]\n"
           "\n"
           "Says why NODE is tainted: for each reason the rule, its summary, the log\n"
           "line, when it was first and last seen and when it expires; then what would\n"
           "lift the taint (faultline itself once every reason expired, or only by\n"
           "hand). For a node without faultline's taint it says so. Needs only get on\n"
           "nodes.\n\n" +
           flags +
           "\nExit status: 0 explained (tainted or not); 1 NODE does not exist or the\n"
           "API server failed; 2 bad flags, config or credentials.\n";
  }
  return "usage: " + p +
         " untaint NODE [--reason TEXT] [--dry-run] [--kubeconfig PATH] [--context NAME]\n"
         "       [--config FILE]\n"
         "\n"
         "Lifts faultline's taint from NODE and removes its reasons annotation (never\n"
         "another controller's taint), and records a Normal Event with TEXT. Works\n"
         "while the safety valve is shut. Needs get and patch on nodes and create on\n"
         "events. --dry-run prints what it would send and sends nothing.\n\n" +
         flags +
         "\nExit status: 0 lifted, or NODE carried no faultline taint (said on stderr);\n"
         "1 NODE does not exist or the API server failed; 2 bad flags, config or\n"
         "credentials.\n";
}

// args[0] is the subcommand. A usage error is a status with the message.
Result<NodeFlags> ParseNodeFlags(const std::vector<std::string>& args) {
  NodeFlags f;
  f.command = args[0];
  const bool takes_node = f.command == "untaint" || f.command == "explain";
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* into) -> Status {
      if (i + 1 >= args.size()) return InvalidArgumentError(a + " needs a value");
      *into = args[++i];
      return OkStatus();
    };
    auto equals = [&](std::string_view name, std::string* into) {
      if (a.size() <= name.size() + 1 || a.compare(0, name.size(), name) != 0 ||
          a[name.size()] != '=') {
        return false;
      }
      *into = a.substr(name.size() + 1);
      return true;
    };
    if (a == "-h" || a == "--help") {
      f.help = true;
      return f;
    } else if (a == "--config" || a == "-c") {
      FL_RETURN_IF_ERROR(value(&f.config));
    } else if (a == "--kubeconfig") {
      FL_RETURN_IF_ERROR(value(&f.kubeconfig));
    } else if (a == "--context") {
      FL_RETURN_IF_ERROR(value(&f.context));
    } else if (equals("--config", &f.config) || equals("--kubeconfig", &f.kubeconfig) ||
               equals("--context", &f.context)) {
    } else if (a == "--reason" && f.command == "untaint") {
      FL_RETURN_IF_ERROR(value(&f.reason));
    } else if (a == "--dry-run" && f.command == "untaint") {
      f.dry_run = true;
    } else if (takes_node && f.node.empty() && !a.empty() && a[0] != '-') {
      f.node = a;
    } else {
      return InvalidArgumentError("unknown argument '" + a + "'");
    }
  }
  if (takes_node && f.node.empty()) return InvalidArgumentError(f.command + " needs a NODE");
  return f;
}

std::string Time(std::chrono::system_clock::time_point t) {
  return t.time_since_epoch().count() == 0 ? "-" : FormatRfc3339(t);
}

// "in 2h13m" / "2h13m ago", to the second.
std::string Relative(std::chrono::system_clock::time_point t,
                     std::chrono::system_clock::time_point now) {
  auto d = std::chrono::duration_cast<std::chrono::seconds>(t > now ? t - now : now - t);
  std::string text = FormatDuration(d);
  return t > now ? "in " + text : text + " ago";
}

NodeReportKeys KeysOf(const Tainter& tainter) {
  return {tainter.options().taint, tainter.options().annotation_key,
          tainter.options().history_annotation_key};
}

int RunNodes(std::string_view program, Tainter& tainter, NodeApi& api, std::ostream& out,
             std::ostream& err) {
  auto nodes = ListTainted(api, KeysOf(tainter));
  if (!nodes) {
    err << program << ": cannot list nodes: " << nodes.error().ToString() << '\n';
    return 1;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %-28s %s\n", "NODE", "SINCE", "REASONS");
  out << line;
  for (const TaintedNodeReport& n : *nodes) {
    std::string reasons;
    for (const Reason& r : n.reasons) {
      if (!reasons.empty()) reasons += "; ";
      reasons += r.rule;
      if (!r.summary.empty()) reasons += " (" + r.summary + ")";
      if (r.expires_at) reasons += " until " + FormatRfc3339(*r.expires_at);
    }
    std::snprintf(line, sizeof line, "%-32s %-28s ", n.node.c_str(), Time(n.since).c_str());
    out << line << reasons << '\n';
  }
  return 0;
}

int RunUntaint(std::string_view program, Tainter& tainter, const NodeFlags& flags, bool dry_run,
               std::ostream& out, std::ostream& err) {
  Status s = tainter.Untaint(flags.node, flags.reason);
  if (!s.ok()) {
    err << program << ": untaint " << flags.node << ": " << s.ToString() << '\n';
    return s.code() == StatusCode::kFailedPrecondition ? 0 : 1;
  }
  out << flags.node << ": faultline's taint lifted" << (dry_run ? " (dry run: nothing sent)" : "")
      << '\n';
  return 0;
}

int RunExplain(std::string_view program, Tainter& tainter, NodeApi& api, const std::string& node,
               const Clock& clock, std::ostream& out, std::ostream& err) {
  Result<TaintedNodeReport> report = ExplainNode(api, KeysOf(tainter), node);
  if (!report) {
    if (report.error().code() == StatusCode::kNotFound) {
      err << program << ": explain " << node << ": no such node\n";
    } else {
      err << program << ": explain " << node << ": " << report.error().ToString() << '\n';
    }
    return 1;
  }
  const std::string taint = TaintText(tainter.options().taint);
  const std::string untaint = std::string(program) + " untaint " + node;
  const auto now = clock.Now();
  if (!report->tainted) {
    out << "Node " << node << " is not tainted by faultline (no " << taint << " taint).\n";
    if (report->reasons.empty()) return 0;
    out << "A reasons annotation (" << tainter.options().annotation_key << ") is left on it; `"
        << untaint << "` removes it:\n";
  } else {
    out << "Node " << node << " is tainted by faultline (" << taint << ")";
    if (report->since.time_since_epoch().count() != 0) {
      out << " since " << FormatRfc3339(report->since) << " (" << Relative(report->since, now)
          << ")";
    }
    out << ".\n";
  }
  bool by_hand = false;
  bool by_reboot = false;  // a `recover: reboot` reason (tainter/core/recovery.h)
  std::optional<std::chrono::system_clock::time_point> lifts;
  int n = 0;
  for (const Reason& r : report->reasons) {
    out << "\nReason " << ++n << ": " << r.rule << '\n';
    if (!r.summary.empty()) out << "  summary:    " << r.summary << '\n';
    if (!r.message.empty()) out << "  log line:   " << r.message << '\n';
    if (!r.evidence.empty()) {
      out << "  lines before it (same source, oldest first):\n";
      for (const std::string& line : r.evidence) out << "    " << line << '\n';
    }
    out << "  first seen: " << Time(r.first_seen) << '\n';
    out << "  last seen:  " << Time(r.last_seen) << '\n';
    if (r.expires_at) {
      out << "  expires:    " << FormatRfc3339(*r.expires_at) << " ("
          << Relative(*r.expires_at, now) << "), unless the rule matches again\n";
      lifts = std::max(lifts.value_or(*r.expires_at), *r.expires_at);
    } else if (r.recover == "reboot" && !r.recurring) {
      out << "  expires:    never; recovers once the node reboots (it faulted in boot id "
          << (r.boot_id.empty() ? "unknown: only by hand" : r.boot_id) << ") and stays quiet for "
          << (r.probation ? FormatDuration(*r.probation) : "recovery.probation") << '\n';
      by_reboot = by_reboot || !r.boot_id.empty();
      by_hand = by_hand || r.boot_id.empty();
    } else {
      out << "  expires:    never: the rule has no expire\n";
      by_hand = true;
    }
    if (r.recurring) {
      out << "  recurring:  it came back soon after a recovery: only a person lifts it\n";
    }
    if (r.reboots > 0) out << "  reboots:    it survived " << r.reboots << '\n';
    if (r.inspection) {
      out << "  inspection: marked for hardware inspection (label " << kNeedsInspectionLabel
          << "=true): only a person lifts it\n";
      by_hand = true;
    }
    if (report->tainted) {
      const Waiting wait =
          WaitingFor(r, report->boot_id, LatestValidation(report->history, report->boot_id),
                     tainter.options().policy.require_validation);
      out << "  waits for:  " << wait.text;
      if (!wait.state.empty()) out << " [" << wait.state << "]";
      out << '\n';
    }
    if (!r.event_id.empty()) out << "  event id:   " << r.event_id << '\n';
  }
  if (!report->history.empty()) {
    out << "\nHistory (" << tainter.options().history_annotation_key
        << ", oldest first; node boot id "
        << (report->boot_id.empty() ? std::string("unknown") : report->boot_id) << "):\n";
    for (const Recovery& h : report->history) out << "  " << RecoveryLine(h) << '\n';
  }
  if (!report->tainted) return 0;
  out << "\nWhat lifts the taint: ";
  if (by_hand || (!lifts && !by_reboot)) {
    out << "only by hand: " << untaint << '\n';
  } else if (by_reboot) {
    out << "faultline itself after a reboot, a passing round of the node's checks in the new "
           "boot and the probation"
        << (lifts ? ", once the other reasons have expired too" : "")
        << ", if no rule matches again; earlier by hand: " << untaint << '\n';
  } else {
    out << "faultline itself at " << FormatRfc3339(*lifts) << " (" << Relative(*lifts, now)
        << "), when the last reason expires, if no rule matches again; earlier by hand: " << untaint
        << '\n';
  }
  return 0;
}

}  // namespace

// Credentials in the one documented order (LoadKubeConfigAuto), the same
// for the daemon, its node watch and the operator's commands.
bool IsNodeCommand(std::string_view arg) {
  return arg == "nodes" || arg == "untaint" || arg == "explain";
}

int RunNodeCommand(std::string_view program, const std::vector<std::string>& args,
                   std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    (args.empty() ? err : out) << Overview(program);
    return args.empty() ? 2 : 0;
  }
  if (!IsNodeCommand(args[0])) {
    err << program << ": unknown command '" << args[0] << "'\n" << Overview(program);
    return 2;
  }
  Result<NodeFlags> flags = ParseNodeFlags(args);
  if (!flags) {
    err << program << " " << args[0] << ": " << flags.error().message() << '\n'
        << Help(program, args[0]);
    return 2;
  }
  if (flags->help) {
    out << Help(program, flags->command);
    return 0;
  }
  TainterConfig config;
  if (!flags->config.empty()) {
    std::optional<TainterConfig> loaded = LoadTainterConfig(flags->config, err);
    if (!loaded) return 2;
    config = std::move(*loaded);
  }
  if (!flags->kubeconfig.empty()) config.kubernetes.kubeconfig = flags->kubeconfig;
  if (!flags->context.empty()) config.kubernetes.context = flags->context;
  if (flags->dry_run) config.tainter.dry_run = true;
  config.list_page_size = kCommandListPageSize;
  // A command prints its answer; the client's info lines would be noise.
  SetLogLevel(std::max(config.log_level, LogLevel::kWarning));
  std::unique_ptr<TainterStack> stack = TainterStack::Create(config, program, err);
  if (!stack) return 2;
  if (flags->command == "nodes") return RunNodes(program, stack->applier(), stack->api(), out, err);
  if (flags->command == "explain") {
    return RunExplain(program, stack->applier(), stack->api(), flags->node, stack->clock(), out,
                      err);
  }
  return RunUntaint(program, stack->applier(), *flags, config.tainter.dry_run, out, err);
}

std::vector<VersionComponent> TainterVersions() {
  return {{"librdkafka", rd_kafka_version_str()},
          {"libcurl", curl_version_info(CURLVERSION_NOW)->version}};
}

}  // namespace faultline
