// SPDX-License-Identifier: Apache-2.0
#include "collector/standalone/standalone_config.h"

#include "base/config_reader.h"
#include "tainter/apply/applier_config.h"

namespace faultline {

std::optional<StandaloneAgentConfig> ParseStandaloneAgentConfig(std::string_view yaml_text,
                                                                std::string_view file,
                                                                Diagnostics& diags,
                                                                AgentMode mode) {
  StandaloneSettings settings;
  ConfigSections sections;
  sections.keys = {"kubernetes", "standalone"};
  sections.read = [&settings](const ConfigMap& root) {
    ReadKubernetesSection(root, settings.kubernetes);
    // One node: a fraction of one is either the node or nothing, and
    // min_allowed (1) lets that one node be tainted, so only the count of
    // new taints per window is a setting here.
    if (auto s =
            root.Sub("standalone", {"dry_run", "taint", "annotation", "max_annotation_bytes",
                                    "opt_out_label", "valve", "node_conditions", "recovery"})) {
      s->Bool("dry_run", settings.dry_run);
      ReadNodeStateSections(*s, settings.tainter, {"max_new_taints", "window", "event_interval"});
    }
  };
  std::optional<AgentConfig> agent = ParseAgentConfig(yaml_text, file, diags, mode, sections);
  if (!agent) return std::nullopt;
  StandaloneAgentConfig c;
  static_cast<AgentConfig&>(c) = std::move(*agent);
  c.standalone = std::move(settings);
  return c;
}

std::optional<StandaloneAgentConfig> LoadStandaloneAgentConfig(const std::string& path,
                                                               AgentMode mode, std::ostream& err,
                                                               bool json) {
  std::string text;
  std::string name = "<embedded standalone defaults>";
  Diagnostics diags;
  std::optional<StandaloneAgentConfig> config;
  if (!path.empty()) {
    name = path;
    if (Status s = ReadConfigText(path, text); !s.ok()) {
      if (!json) {
        err << path << ": error: cannot read the config file\n";
        return std::nullopt;
      }
      diags.Error("C000", {path, 0, 0}, "cannot read the config file");  // no line: the file
    }
  }
  if (diags.error_count() == 0) config = ParseStandaloneAgentConfig(text, name, diags, mode);
  if (json) {
    if (!config) err << diags.ToJson().dump() << '\n';
  } else if (!config) {
    diags.Print(err, {{name, text}});
  }
  return config;
}

std::string DefaultStandaloneConfigYaml() {
  return R"yaml(# Only with --standalone (no Kafka; the tainter's policy runs in the agent, on its own node):
kubernetes:
  kubeconfig: ""            # "" = $KUBECONFIG, else in-cluster, else ~/.kube/config; none = dry run
  context: ""               # "" = current-context
  qps: 5
  burst: 10
  request_timeout: 10s
standalone:
  dry_run: false            # print the patches instead of sending them (also --dry-run)
  taint: {key: faultline.dev/faulty, value: "true", effect: NoSchedule}
  annotation: faultline.dev/reasons
  max_annotation_bytes: 16384
  opt_out_label: faultline.dev/opt-out=true
  valve:
    max_new_taints: 5       # new taints per window (0 = no limit); fractions do not apply to one node
    window: 10m
    event_interval: 10m     # at most one Event per rule in this interval for repeats
)yaml";
}

std::string AssembleErrorHint(const Status& error, const AgentConfig& config) {
  if (error.code() != StatusCode::kPermissionDenied || !config.kmsg_enabled ||
      error.message().find(config.kmsg.device_path) == std::string::npos) {
    return {};
  }
  return "reading " + config.kmsg.device_path +
         " needs root or CAP_SYSLOG; run with sudo, or set sources.kmsg.enabled: false and read a "
         "file instead";
}

}  // namespace faultline
