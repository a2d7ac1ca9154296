// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/agent_flags.h"

#include <array>

namespace faultline {
namespace {

constexpr char kAgentUsage[] =
    "usage: faultline-agent --config FILE [--format json|text]\n"
    "       faultline-agent --standalone [--dry-run] [--config FILE]   (no Kafka)\n"
    "       faultline-agent --standalone --demo\n"
    "       faultline-agent --check-once [--config FILE]   (Slurm HealthCheckProgram)\n"
    "       faultline-agent --print-default-config\n"
    "       faultline-agent --version\n";

constexpr char kAgentHelp[] = R"(
The node agent: reads /dev/kmsg, the journal, pod logs and InfiniBand
counters, matches them against the rule packs and publishes one event per
fault to Kafka (key = node). Runs until SIGTERM or SIGINT; SIGHUP reloads
the rules.

  --config FILE           the agent config (YAML); every key and its default:
                          faultline-agent --print-default-config
  --standalone            no Kafka: the tainter's policy in this process, acting
                          on this node only (faultline-agent --standalone --help)
  --format json|text      how config problems are reported on stderr (text:
                          file:line:col, code, source line and caret; json: one
                          array of {file,line,column,level,code,message})
  --check-once            run the active checks once, print nothing and exit 0
                          when the node is healthy, or print one line
                          "faultline: RULE: SUMMARY" and exit 1 when a check
                          fails a tainting rule (NHC-style, for Slurm's
                          HealthCheckProgram; no Kafka, no other source)
  --print-default-config  print the default config and exit
  --version               print the version, the libraries' and the built-in
                          rule packs' versions, and exit
  -h, --help              print this help and exit

Exit status: 0 stopped with every event delivered; 1 events left undelivered
or a runtime failure; 2 bad flags, an invalid config or invalid rules.
)";

constexpr char kStandaloneUsage[] =
    "usage: faultline-agent --standalone [--dry-run] [--config FILE] [--format json|text]\n"
    "       faultline-agent --standalone --demo\n";

constexpr char kStandaloneHelp[] = R"(
The agent and the tainter's policy in one process, without Kafka: faults
found on this node taint this node only (no other node is ever written).
Kubernetes credentials: the in-cluster service account, $KUBECONFIG or
~/.kube/config. Runs until SIGTERM or SIGINT; SIGHUP reloads the rules.

  --config FILE  the agent config (YAML); defaults suit one node
  --dry-run      print each taint patch and Event it would send, send none
  --format json|text
                 how config problems are reported on stderr (json: one array
                 of {file,line,column,level,code,message})
  --demo         a dry run fed with a marked fake Xid 13 and Xid 79 (written
                 to /dev/kmsg, or to a file where it cannot be written);
                 prints the decisions and exits; takes no --config
  -h, --help     print this help and exit

Exit status: 0 clean stop; 1 a runtime failure; 2 bad flags, an invalid
config or invalid rules.
)";

enum class Flag {
  kConfig,
  kFormat,
  kHelp,
  kVersion,
  kStandalone,
  kPrintDefaultConfig,
  kDryRun,
  kDemo,
  kCheckOnce
};

// Every flag, and the modes that take it.
struct FlagSpec {
  std::string_view name;
  Flag flag;
  bool kafka_mode;
  bool standalone_mode;
};
constexpr std::array<FlagSpec, 10> kFlags{{
    {"--config", Flag::kConfig, true, true},
    {"--format", Flag::kFormat, true, true},
    {"--help", Flag::kHelp, true, true},
    {"-h", Flag::kHelp, true, true},
    {"--version", Flag::kVersion, true, true},
    {"--standalone", Flag::kStandalone, true, true},
    {"--print-default-config", Flag::kPrintDefaultConfig, true, false},
    {"--dry-run", Flag::kDryRun, false, true},
    {"--demo", Flag::kDemo, false, true},
    {"--check-once", Flag::kCheckOnce, true, false},
}};

const FlagSpec* Find(std::string_view arg, bool standalone) {
  for (const FlagSpec& f : kFlags) {
    if (f.name == arg && (standalone ? f.standalone_mode : f.kafka_mode)) return &f;
  }
  return nullptr;
}

AgentFlags BadUsage(AgentFlags flags, std::string message) {
  flags.action = AgentFlags::Action::kBadUsage;
  flags.error = std::move(message);
  return flags;
}

}  // namespace

std::string_view AgentUsage(bool standalone) { return standalone ? kStandaloneUsage : kAgentUsage; }

std::string_view AgentHelp(bool standalone) { return standalone ? kStandaloneHelp : kAgentHelp; }

AgentFlags ParseAgentFlags(int argc, const char* const* argv) {
  AgentFlags flags;
  // --version and --standalone count wherever they stand: the first decides
  // before anything else is read, the second which mode reads the rest.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--version") {
      flags.action = AgentFlags::Action::kPrintVersion;
      return flags;
    }
    if (arg == "--standalone") flags.standalone = true;
  }
  const std::string usage(AgentUsage(flags.standalone));
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--config=", 0) == 0) {
      flags.config_path = arg.substr(9);
      continue;
    }
    const FlagSpec* spec = Find(arg, flags.standalone);
    const bool takes_value =
        spec != nullptr && (spec->flag == Flag::kConfig || spec->flag == Flag::kFormat);
    if (spec == nullptr || (takes_value && i + 1 >= argc)) {
      return BadUsage(flags,
                      "faultline-agent: unknown argument '" + std::string(arg) + "'\n" + usage);
    }
    switch (spec->flag) {
      case Flag::kConfig:
        flags.config_path = argv[++i];
        break;
      case Flag::kFormat: {
        const std::string_view format = argv[++i];
        if (format != "json" && format != "text") {
          return BadUsage(flags, "faultline-agent: --format must be json or text\n" + usage);
        }
        flags.json = format == "json";
        break;
      }
      case Flag::kHelp:
        flags.action = AgentFlags::Action::kPrintHelp;
        return flags;
      case Flag::kPrintDefaultConfig:
        flags.action = AgentFlags::Action::kPrintDefaultConfig;
        return flags;
      case Flag::kDryRun:
        flags.dry_run = true;
        break;
      case Flag::kDemo:
        flags.demo = true;
        break;
      case Flag::kCheckOnce:
        flags.check_once = true;
        break;
      case Flag::kVersion:
      case Flag::kStandalone:
        break;
    }
  }
  if (!flags.standalone && !flags.check_once && flags.config_path.empty()) {
    return BadUsage(flags, usage);
  }
  if (flags.demo && !flags.config_path.empty()) {
    return BadUsage(flags,
                    "faultline-agent: --demo takes no --config (it uses the embedded defaults)\n");
  }
  return flags;
}

}  // namespace faultline
