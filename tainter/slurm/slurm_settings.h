// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "base/config_reader.h"

namespace faultline {

// The `slurm:` section of faultline-tainter's config (tainter/README.md,
// "Slurm"): how the Slurm actuator reaches the controller and what it
// writes. Read when `actuator: slurm`.
struct SlurmSettings {
  std::string scontrol = "scontrol";  // a path, or a name looked up on PATH
  // SLURM_CONF for every scontrol run; empty: scontrol's own default
  // (/etc/slurm/slurm.conf, or a configless controller).
  std::string slurm_conf;
  // One scontrol run, killed past it (scontrol itself retries a controller
  // that does not answer for about 9 s before giving up).
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
  // The ownership mark at the start of every Reason faultline writes.
  std::string reason_prefix = "faultline:";
  std::size_t reason_max_bytes = 120;
  // faultline node name -> Slurm NodeName (tainter/slurm/slurm_names.h).
  std::string node_name_pattern = "{name}";
  std::map<std::string, std::string> node_names;
  // The valve's record shared by the replicas (tainter/slurm/valve_record_file.h);
  // empty: each replica counts in memory for itself.
  std::string valve_record;
  // How often the nodes are read again (Slurm has no watch): a drain lifted
  // by hand, an operator's drain, another replica's drain.
  std::chrono::seconds poll_interval{10};
  // `jobs:` what faultline does to the jobs running on a node it has just
  // drained. OFF BY DEFAULT: a drain lets running jobs finish (Slurm's
  // meaning of DRAIN). `requeue` puts them back in the queue (scontrol
  // requeue: a batch job restarts elsewhere from its start or its own
  // checkpoint), `cancel` ends them (scancel). Only for drains whose first
  // reason's rule starts with one of `rules` (empty: every rule).
  enum class JobAction { kNone, kRequeue, kCancel };
  JobAction job_action = JobAction::kNone;
  std::vector<std::string> job_rules;
  std::string squeue = "squeue";
  std::string scancel = "scancel";
};

// Reads `slurm: {scontrol, slurm_conf, timeout, reason_prefix,
// reason_max_bytes, node_name_pattern, node_names, valve_record,
// poll_interval, jobs: {action, rules, squeue, scancel}}` from the mapping
// that holds it.
void ReadSlurmSection(const ConfigMap& parent, SlurmSettings& out);

}  // namespace faultline
