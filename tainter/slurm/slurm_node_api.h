// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tainter/core/label_selector.h"
#include "tainter/core/node_model.h"
#include "tainter/kube/node_api.h"
#include "tainter/slurm/command_runner.h"
#include "tainter/slurm/slurm_names.h"
#include "tainter/slurm/slurm_node_text.h"
#include "tainter/slurm/slurm_settings.h"
#include "tainter/slurm/valve_record_file.h"

namespace faultline {

// The node and valve-record parts of NodeApi over a Slurm controller, with
// scontrol (tainter/slurm/README.md says why scontrol and not slurmrestd).
// The applier (tainter/apply/) runs on it unchanged: it sees each Slurm
// node as a NodeInfo, and its writes become drains and resumes.
//
// The mapping, read both ways:
//   faultline's taint      <-> the DRAIN flag with a Reason that starts with
//                              settings.reason_prefix (SlurmReasonText: rule,
//                              summary, cut to reason_max_bytes)
//   annotations            <-> the node's Extra field, a JSON object of
//                              strings (other keys in it are kept); survives
//                              a slurmctld restart with StateSaveLocation
//   an operator's node     <-> DRAIN, DOWN or FAIL with any other reason:
//                              presented with the opt-out label, so the
//                              applier never claims, resumes or re-drains it
//   boot_id                <-  BootTime (reboot recovery)
//   labels                 <-  "slurm.partition/NAME=true" per partition
//   resource_version       <-  a digest of state, reason and Extra
// A lift is State=UNDRAIN: it clears the drain and keeps a DOWN base state
// (a node Slurm holds down stays down). After a new drain, and only when
// settings.job_action asks (off by default), the node's running jobs are
// requeued or cancelled (ActOnJobs).
//
// Errors: kNotFound (no such Slurm node, or one outside the name mapping),
// kUnavailable (scontrol failed: the controller is down, munge refused, a
// timeout; retried by the applier), kAborted (the node moved since the
// expected version, or an operator took it), kFailedPrecondition (Extra
// holds text faultline would overwrite; conditions; watches).
//
// Thread-safety: one thread at a time (as NodeApi).
// It has the NodeApi, EventApi and ValveRecordApi capabilities; no pods, no watches.
class SlurmNodeApi final : public NodeApi, public EventApi, public ValveRecordApi {
 public:
  struct Options {
    SlurmSettings settings;
    NodeTaint taint;             // how faultline's drain is presented
    std::string annotation_key;  // the reasons annotation (the Reason text's source)
    std::string opt_out_label;   // "key=value" put on an operator's node
  };
  // kInvalidArgument: a bad name mapping or opt-out label.
  static Result<std::unique_ptr<SlurmNodeApi>> Create(Options options,
                                                      std::unique_ptr<CommandRunner> runner);

  Result<NodeInfo> GetNode(std::string_view name) override;
  Result<std::vector<NodeInfo>> ListNodes(std::string_view label_selector) override;
  Status UpdateNode(std::string_view name, const NodeChange& change) override;
  // Slurm nodes have no conditions: the stack turns node_conditions off, so
  // this is never called (kFailedPrecondition if it is).
  Status PatchNodeConditions(std::string_view name,
                             const std::vector<NodeCondition>& conditions) override;
  // No Event object in Slurm: a log line (component "slurm") records it.
  Status CreateEvent(const NodeEvent& event) override;
  Result<SharedRecord> GetValveRecord() override;
  Status PutValveRecord(const std::string& value, const std::string& expected_version) override;

  // The node as faultline presents it (public for `explain` and the tests).
  NodeInfo Present(const SlurmNode& node, const std::string& faultline_name) const;

 private:
  SlurmNodeApi(Options options, SlurmNames names, LabelMatch opt_out,
               std::unique_ptr<CommandRunner> runner);
  // `scontrol show node [NAME]`; kNotFound when NAME is unknown to Slurm.
  Result<std::vector<SlurmNode>> Show(const std::string& slurm_name);
  Result<SlurmNode> ShowOne(const std::string& slurm_name);
  // `scontrol update NodeName=... ARGS...`; its failure only as the text.
  Status Update(const std::string& slurm_name, const std::vector<std::string>& args);
  // Runs scontrol unless the controller was found unreachable less than
  // the current backoff ago (1 s, doubling to 30 s, reset by any answer):
  // during an outage the tainter's one thread waits on at most one
  // scontrol per backoff, not one per node and poll (kUnavailable at once).
  Result<CommandOutput> Call(const std::vector<std::string>& argv);
  bool Ours(const SlurmNode& node) const;
  bool OperatorOwned(const SlurmNode& node) const;
  std::string ReasonFor(const std::map<std::string, std::string>& annotations) const;
  // settings.job_action on the jobs running on a node just drained for
  // `rule`: best effort, after the drain holds (a failure is logged, never
  // retried, never undoes the drain).
  void ActOnJobs(const std::string& slurm_name, const std::string& rule);

  Options options_;
  SlurmNames names_;
  LabelMatch opt_out_;
  std::unique_ptr<CommandRunner> runner_;
  ValveRecordFile valve_;
  std::chrono::milliseconds backoff_{0};
  std::chrono::steady_clock::time_point retry_at_{};
  std::string last_failure_;
};

}  // namespace faultline
