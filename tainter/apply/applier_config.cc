// SPDX-License-Identifier: Apache-2.0
#include "tainter/apply/applier_config.h"

#include "tainter/core/label_selector.h"

namespace faultline {

void ReadNodeStateSections(const ConfigMap& parent, Tainter::Options& out,
                           const std::vector<std::string_view>& valve_keys) {
  if (auto t = parent.Sub("taint", {"key", "value", "effect"})) {
    t->String("key", out.taint.key);
    t->String("value", out.taint.value);
    t->String("effect", out.taint.effect);
    const std::string& effect = out.taint.effect;
    if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      t->Error("effect", "C003",
               "'" + t->PathOf("effect") +
                   "' must be NoSchedule, PreferNoSchedule or NoExecute, not '" + effect + "'");
    }
    if (out.taint.key.empty()) t->Error("key", "C004", "'" + t->PathOf("key") + "' is empty");
  }
  parent.String("annotation", out.annotation_key);
  parent.Number("max_annotation_bytes", out.max_annotation_bytes, std::size_t{1024});
  parent.String("opt_out_label", out.opt_out_label);
  parent.Bool("node_conditions", out.node_conditions);
  if (auto s = LabelMatch::Parse(out.opt_out_label); !s) {
    parent.Error("opt_out_label", "C003",
                 "'" + parent.PathOf("opt_out_label") + "': " + s.error().message());
  }
  if (auto v = parent.Sub("valve", valve_keys)) {
    Policy::Options& p = out.policy;
    v->Real("max_fraction", p.max_fraction, 0, 1, "a number between 0 and 1 (0.1 = 10%)");
    v->Real("per_rule_max_fraction", p.per_rule_max_fraction, 0, 1,
            "a number between 0 and 1 (0.1 = 10%)");
    v->Number("min_allowed", p.min_allowed, 0);
    v->Number("max_new_taints", p.max_new_taints, 0);
    v->Duration("window", p.new_taint_window, false);
    v->Duration("event_interval", p.event_interval, false);
    v->Number("refusal_events_per_minute", p.refusal_events_per_minute, 0);
  }
  if (auto r = parent.Sub("recovery", {"probation", "recurring_window", "annotation",
                                       "require_validation", "inspection_after_reboots"})) {
    r->Duration("probation", out.policy.probation, false);
    r->Duration("recurring_window", out.policy.recurring_window, false);
    r->Bool("require_validation", out.policy.require_validation);
    r->Number("inspection_after_reboots", out.policy.inspection_after_reboots, 0);
    r->String("annotation", out.history_annotation_key);
    if (out.history_annotation_key.empty() || out.history_annotation_key == out.annotation_key) {
      r->Error("annotation", "C003",
               "'" + r->PathOf("annotation") + "' must be a key of its own beside 'annotation'");
    }
  }
}

}  // namespace faultline
