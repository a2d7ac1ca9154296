// SPDX-License-Identifier: Apache-2.0
#include "tainter/daemon/tainter_config.h"

#include <ostream>

namespace faultline {

void ReadRemediationSection(const ConfigMap& parent, RemediationOptions& out) {
  auto r = parent.Sub("remediation", {"action", "by_category", "by_rule", "drain"});
  if (!r) return;
  auto action = [&r](std::string_view key, const std::string& path, const std::string& text,
                     RemediationAction& to) {
    if (auto a = ParseRemediationAction(text)) {
      to = *a;
    } else {
      r->Error(key, "C003", "'" + path + "' must be taint, cordon or drain, not '" + text + "'");
    }
  };
  std::string text = std::string(RemediationActionName(out.action));
  r->String("action", text);
  action("action", r->PathOf("action"), text, out.action);
  for (const char* key : {"by_category", "by_rule"}) {
    std::map<std::string, std::string> names;
    r->StringMap(key, names);
    auto& to = std::string_view(key) == "by_rule" ? out.by_rule : out.by_category;
    for (const auto& [name, value] : names) {
      action(key, r->PathOf(key) + "." + name, value, to[name]);
    }
  }
  if (auto d = r->Sub("drain", {"grace_period", "max_concurrent", "retry_interval",
                                "max_retry_interval", "deadline"})) {
    if (d->Get("grace_period").IsDefined()) {
      std::chrono::seconds grace{0};
      d->Duration("grace_period", grace, true);
      out.grace_period = grace;
    }
    d->Number("max_concurrent", out.max_concurrent_drains, 1);
    d->Duration("retry_interval", out.retry_interval, false);
    d->Duration("max_retry_interval", out.max_retry_interval, false);
    d->Duration("deadline", out.drain_deadline, false);
  }
}

std::optional<TainterConfig> ParseTainterConfig(std::string_view yaml_text,
                                                std::string_view file_name, Diagnostics& diags,
                                                bool require_brokers) {
  const std::size_t errors_before = diags.error_count();
  ConfigReader reader{std::string(file_name), diags};
  std::optional<YAML::Node> root = reader.Load(yaml_text);
  if (!root) return std::nullopt;
  TainterConfig c;
  try {
    ConfigMap map(reader, *root, "",
                  {"kafka",
                   "kubernetes",
                   "actuator",
                   "slurm",
                   "taint",
                   "annotation",
                   "max_annotation_bytes",
                   "node_selector",
                   "opt_out_label",
                   "valve",
                   "dedupe",
                   "resync_interval",
                   "max_pending",
                   "dry_run",
                   "metrics_address",
                   "log_level",
                   "rules",
                   "correlation",
                   "node_conditions",
                   "remediation",
                   "pod_events",
                   "recovery"});
    if (!map.valid()) return std::nullopt;
    if (auto k = map.Sub("kafka", {"brokers", "topic", "group", "dead_letter_topic", "rebuild_span",
                                   "rebuild_max_messages", "properties"})) {
      k->String("brokers", c.kafka.brokers);
      k->String("topic", c.kafka.topic);
      k->String("group", c.kafka.group);
      k->String("dead_letter_topic", c.kafka.dead_letter_topic);
      k->Duration("rebuild_span", c.kafka.rebuild_span, false);
      k->Number("rebuild_max_messages", c.kafka.rebuild_max_messages, std::int64_t{0});
      k->StringMap("properties", c.kafka.properties);
    }
    if (require_brokers && c.kafka.brokers.empty()) {
      const YAML::Node kafka = map.Get("kafka");
      reader.Error(kafka.IsDefined() ? kafka : *root, "C004",
                   "'kafka.brokers' is required (bootstrap servers, host:port,...)");
    }
    if (auto r = map.Sub("rules", {"builtin", "paths", "on_mismatch"})) {
      r->Bool("builtin", c.rules.builtin);
      r->StringList("paths", c.rules.paths);
      std::string on_mismatch = "set_aside";
      r->String("on_mismatch", on_mismatch);
      if (on_mismatch == "decide_by_rule") {
        c.on_mismatch = RuleCheck::OnMismatch::kDecideByRule;
      } else if (on_mismatch != "set_aside") {
        r->Error("on_mismatch", "C003",
                 "'" + r->PathOf("on_mismatch") + "' must be set_aside or decide_by_rule, not '" +
                     on_mismatch + "'");
      }
    }
    ReadKubernetesSection(map, c.kubernetes);
    map.String("actuator", c.actuator);
    if (c.actuator != "kubernetes" && c.actuator != "slurm") {
      map.Error("actuator", "C003",
                "'actuator' must be kubernetes or slurm, not '" + c.actuator + "'");
    }
    ReadSlurmSection(map, c.slurm);
    ReadNodeStateSections(map, c.tainter,
                          {"max_fraction", "per_rule_max_fraction", "min_allowed", "max_new_taints",
                           "window", "event_interval", "refusal_events_per_minute"});
    map.String("node_selector", c.tainter.node_selector);
    if (auto s = LabelSelector::Parse(c.tainter.node_selector); !s) {
      map.Error("node_selector", "C003", "'node_selector': " + s.error().message());
    }
    // The tainter's alone: the standalone agent cannot list pods (deploy/README.md).
    if (auto p = map.Sub("pod_events", {"enabled", "max_pods", "node_lists_per_minute"})) {
      p->Bool("enabled", c.tainter.pod_events.enabled);
      p->Number("max_pods", c.tainter.pod_events.max_pods, std::size_t{1});
      p->Number("node_lists_per_minute", c.tainter.pod_events.node_lists_per_minute,
                std::size_t{0});
    }
    if (auto d = map.Sub("dedupe", {"capacity", "ttl"})) {
      d->Number("capacity", c.tainter.policy.dedupe_capacity, std::size_t{1});
      d->Duration("ttl", c.tainter.policy.dedupe_ttl, false);
    }
    if (auto k =
            map.Sub("correlation", {"enabled", "identity_topic", "rebuild_span", "min_reporters",
                                    "window", "incident_window", "incident_lookback",
                                    "incident_min_nodes", "incident_rules"})) {
      CorrelationSettings& cs = c.correlation;
      k->Bool("enabled", cs.enabled);
      k->String("identity_topic", cs.identity_topic);
      k->Duration("rebuild_span", cs.rebuild_span, false);
      k->Number("min_reporters", cs.correlator.peers.min_reporters, 1);
      k->Duration("window", cs.correlator.peers.window, false);
      k->Duration("incident_window", cs.correlator.incidents.window, false);
      k->Duration("incident_lookback", cs.correlator.incidents.lookback, true);
      k->Number("incident_min_nodes", cs.correlator.incidents.min_nodes, 1);
      k->StringList("incident_rules", cs.correlator.incidents.rule_prefixes);
    }
    ReadRemediationSection(map, c.remediation);
    if (c.actuator == "slurm" && c.remediation.Active()) {
      map.Error("remediation", "C003",
                "'remediation' (cordon, drain through Kubernetes) does not apply with "
                "'actuator: slurm': the Slurm drain is the action");
    }
    map.Duration("resync_interval", c.tainter.resync_interval, false);
    map.Number("max_pending", c.tainter.max_pending, std::size_t{1});
    map.Bool("dry_run", c.tainter.dry_run);
    map.String("metrics_address", c.metrics_address);
    std::string level = "info";
    map.String("log_level", level);
    if (!ParseLogLevel(level, &c.log_level)) {
      map.Error("log_level", "C003", "'log_level' must be debug, info, warn or error");
    }
  } catch (const YAML::Exception& e) {
    diags.Error("C001", {std::string(file_name), e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
  if (diags.error_count() != errors_before) return std::nullopt;
  return c;
}

Result<TainterConfig> ParseTainterConfig(std::string_view yaml_text, std::string_view file_name) {
  Diagnostics diags;
  std::optional<TainterConfig> c = ParseTainterConfig(yaml_text, file_name, diags);
  if (!c) return InvalidArgumentError(DiagnosticsMessage(diags));
  return std::move(*c);
}

Result<TainterConfig> LoadTainterConfig(const std::string& path) {
  std::string text;
  if (Status s = ReadConfigText(path, text); !s.ok()) return s;
  return ParseTainterConfig(text, path);
}

std::optional<TainterConfig> LoadTainterConfig(const std::string& path, std::ostream& err,
                                               bool require_brokers, bool json) {
  std::string text;
  Diagnostics diags;
  std::optional<TainterConfig> c;
  if (Status s = ReadConfigText(path, text); !s.ok()) {
    if (!json) {
      err << s.message() << '\n';
      return std::nullopt;
    }
    diags.Error("C000", {path, 0, 0}, s.message());  // no line: the file itself
  } else {
    c = ParseTainterConfig(text, path, diags, require_brokers);
  }
  if (json) {
    if (!diags.all().empty()) err << diags.ToJson().dump() << '\n';
  } else {
    diags.Print(err, {{path, text}});
  }
  return c;
}

}  // namespace faultline
