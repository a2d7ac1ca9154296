// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/slurm_settings.h"

#include "tainter/slurm/slurm_names.h"

namespace faultline {

void ReadSlurmSection(const ConfigMap& parent, SlurmSettings& out) {
  auto s = parent.Sub("slurm",
                      {"scontrol", "slurm_conf", "timeout", "reason_prefix", "reason_max_bytes",
                       "node_name_pattern", "node_names", "valve_record", "poll_interval", "jobs"});
  if (!s) return;
  s->String("scontrol", out.scontrol);
  s->String("slurm_conf", out.slurm_conf);
  s->Duration("timeout", out.timeout, false);
  s->String("reason_prefix", out.reason_prefix);
  if (out.reason_prefix.empty()) {
    s->Error("reason_prefix", "C003",
             "'" + s->PathOf("reason_prefix") +
                 "' must not be empty: it is how faultline knows its own drains");
  }
  s->Number("reason_max_bytes", out.reason_max_bytes, std::size_t{out.reason_prefix.size() + 8});
  s->String("node_name_pattern", out.node_name_pattern);
  s->StringMap("node_names", out.node_names);
  if (auto names = SlurmNames::Create(out.node_name_pattern, out.node_names); !names) {
    s->Error("node_name_pattern", "C003",
             "'" + s->PathOf("node_name_pattern") + "': " + names.error().message());
  }
  s->String("valve_record", out.valve_record);
  s->Duration("poll_interval", out.poll_interval, false);
  if (auto j = s->Sub("jobs", {"action", "rules", "squeue", "scancel"})) {
    std::string action = "none";
    j->String("action", action);
    if (action == "none") {
      out.job_action = SlurmSettings::JobAction::kNone;
    } else if (action == "requeue") {
      out.job_action = SlurmSettings::JobAction::kRequeue;
    } else if (action == "cancel") {
      out.job_action = SlurmSettings::JobAction::kCancel;
    } else {
      j->Error(
          "action", "C003",
          "'" + j->PathOf("action") + "' must be none, requeue or cancel, not '" + action + "'");
    }
    j->StringList("rules", out.job_rules);
    j->String("squeue", out.squeue);
    j->String("scancel", out.scancel);
  }
}

}  // namespace faultline
