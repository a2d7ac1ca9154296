// SPDX-License-Identifier: Apache-2.0
#include "tainter/slurm/slurm_node_api.h"

#include <cstdio>
#include <functional>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "tainter/core/reasons.h"
#include "tainter/slurm/slurm_reason.h"

namespace faultline {
namespace {

constexpr std::string_view kPartitionLabel = "slurm.partition/";

// Extra as faultline reads it: a JSON object whose string members are
// annotations. nullopt: Extra holds something else (someone's text).
std::optional<nlohmann::json> ExtraObject(const std::string& extra) {
  if (extra.empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(extra, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

std::string Digest(const SlurmNode& node) {
  const std::size_t h = std::hash<std::string>{}(node.state + '\x1f' + node.reason + '\x1f' +
                                                 node.reason_user + '\x1f' + node.extra);
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016zx", h);
  return buf;
}

// The first line of scontrol's complaint, for a log line and an error.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? std::string("no message") : line;
}

}  // namespace

Result<std::unique_ptr<SlurmNodeApi>> SlurmNodeApi::Create(Options options,
                                                           std::unique_ptr<CommandRunner> runner) {
  Result<SlurmNames> names =
      SlurmNames::Create(options.settings.node_name_pattern, options.settings.node_names);
  if (!names) return names.error();
  if (options.opt_out_label.empty()) {
    return InvalidArgumentError(
        "the Slurm actuator needs an opt_out_label: it marks the nodes an operator drained");
  }
  Result<LabelMatch> opt_out = LabelMatch::Parse(options.opt_out_label);
  if (!opt_out) return InvalidArgumentError("opt_out_label: " + opt_out.error().message());
  return std::unique_ptr<SlurmNodeApi>(
      new SlurmNodeApi(std::move(options), std::move(*names), *opt_out, std::move(runner)));
}

SlurmNodeApi::SlurmNodeApi(Options options, SlurmNames names, LabelMatch opt_out,
                           std::unique_ptr<CommandRunner> runner)
    : options_(std::move(options)),
      names_(std::move(names)),
      opt_out_(std::move(opt_out)),
      runner_(std::move(runner)),
      valve_(options_.settings.valve_record, options_.settings.timeout * 4) {}

bool SlurmNodeApi::Ours(const SlurmNode& node) const {
  return IsFaultlineReason(node.reason, options_.settings.reason_prefix);
}

bool SlurmNodeApi::OperatorOwned(const SlurmNode& node) const {
  return (node.Drain() || node.Down() || node.Fail()) && !Ours(node);
}

NodeInfo SlurmNodeApi::Present(const SlurmNode& node, const std::string& faultline_name) const {
  NodeInfo info;
  info.name = faultline_name;
  info.uid = "slurm:" + node.name;
  info.resource_version = Digest(node);
  info.boot_id = node.boot_time;
  for (const std::string& p : node.partitions) {
    info.labels[std::string(kPartitionLabel) + p] = "true";
  }
  if (OperatorOwned(node)) {
    info.labels[opt_out_.key] = opt_out_.value.empty() ? "true" : opt_out_.value;
  }
  if (node.Drain() && Ours(node)) {
    NodeTaint t = options_.taint;
    t.time_added.clear();
    info.taints.push_back(std::move(t));
  }
  if (std::optional<nlohmann::json> extra = ExtraObject(node.extra)) {
    for (const auto& [key, value] : extra->items()) {
      if (value.is_string()) info.annotations[key] = value.get<std::string>();
    }
  }
  return info;
}

Result<CommandOutput> SlurmNodeApi::Call(const std::vector<std::string>& argv) {
  constexpr std::chrono::milliseconds kFirstBackoff{1000};
  constexpr std::chrono::milliseconds kMaxBackoff{30'000};
  const auto now = std::chrono::steady_clock::now();
  if (backoff_.count() > 0 && now < retry_at_) {
    return UnavailableError(
        "the Slurm controller is unreachable (" + last_failure_ + "); next try in " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - now).count()) +
        " ms");
  }
  Result<CommandOutput> run = runner_->Run(argv, options_.settings.timeout);
  // "Unable to contact slurm controller", or killed at the deadline: the
  // controller (or munge) is not answering. Any other answer resets.
  const bool unreachable =
      !run || (run->exit_code != 0 && (run->err.find("Unable to contact") != std::string::npos ||
                                       run->err.find("Socket timed out") != std::string::npos ||
                                       run->err.find("munge") != std::string::npos ||
                                       run->err.find("Munge") != std::string::npos));
  if (unreachable) {
    last_failure_ = !run ? run.error().message() : FirstLine(run->err);
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    retry_at_ = std::chrono::steady_clock::now() + backoff_;
  } else {
    backoff_ = std::chrono::milliseconds{0};
  }
  return run;
}

Result<std::vector<SlurmNode>> SlurmNodeApi::Show(const std::string& slurm_name) {
  std::vector<std::string> argv{options_.settings.scontrol, "show", "node"};
  if (!slurm_name.empty()) argv.push_back(slurm_name);
  Result<CommandOutput> run = Call(argv);
  if (!run) return run.error();
  if (run->exit_code != 0) {
    if (!slurm_name.empty() && run->out.find("not found") != std::string::npos) {
      return NotFoundError("Slurm has no node " + slurm_name);
    }
    return UnavailableError("scontrol show node: " + FirstLine(run->err + run->out));
  }
  return ParseScontrolNodes(run->out);
}

Result<SlurmNode> SlurmNodeApi::ShowOne(const std::string& slurm_name) {
  Result<std::vector<SlurmNode>> nodes = Show(slurm_name);
  if (!nodes) return nodes.error();
  for (SlurmNode& n : *nodes) {
    if (n.name == slurm_name) return std::move(n);
  }
  return NotFoundError("Slurm has no node " + slurm_name);
}

Result<NodeInfo> SlurmNodeApi::GetNode(std::string_view name) {
  std::optional<std::string> slurm_name = names_.ToSlurm(name);
  if (!slurm_name) return NotFoundError("no Slurm node for " + std::string(name));
  Result<SlurmNode> node = ShowOne(*slurm_name);
  if (!node) return node.error();
  return Present(*node, std::string(name));
}

Result<std::vector<NodeInfo>> SlurmNodeApi::ListNodes(std::string_view label_selector) {
  Result<LabelSelector> selector = LabelSelector::Parse(label_selector);
  if (!selector) return InvalidArgumentError("label selector: " + selector.error().message());
  // The fence (valve_record_file.h): never list while a replica is between
  // its valve reservation and its drain, or this replica would see the node
  // undrained after the reservation and stop counting it.
  valve_.Release();
  if (!options_.settings.valve_record.empty() && !valve_.WaitUnheld(options_.settings.timeout)) {
    LogWarning("slurm", "the valve record stayed locked; listing anyway",
               {{"valve_record", options_.settings.valve_record}});
  }
  Result<std::vector<SlurmNode>> nodes = Show("");
  if (!nodes) return nodes.error();
  std::vector<NodeInfo> out;
  for (const SlurmNode& n : *nodes) {
    std::optional<std::string> name = names_.ToFaultline(n.name);
    if (!name) continue;
    NodeInfo info = Present(n, *name);
    if (selector->Matches(info.labels)) out.push_back(std::move(info));
  }
  return out;
}

namespace {
std::string FirstRule(const std::map<std::string, std::string>& annotations,
                      const std::string& key) {
  auto it = annotations.find(key);
  if (it == annotations.end()) return {};
  Result<std::vector<Reason>> reasons = DecodeReasons(it->second);
  return reasons && !reasons->empty() ? reasons->front().rule : std::string();
}
}  // namespace

void SlurmNodeApi::ActOnJobs(const std::string& slurm_name, const std::string& rule) {
  const SlurmSettings& s = options_.settings;
  if (s.job_action == SlurmSettings::JobAction::kNone) return;
  bool listed = s.job_rules.empty();
  for (const std::string& prefix : s.job_rules) listed = listed || rule.starts_with(prefix);
  if (!listed) return;
  Result<CommandOutput> jobs =
      Call({s.squeue, "--noheader", "--nodelist=" + slurm_name, "--states=RUNNING", "--format=%A"});
  if (!jobs || jobs->exit_code != 0) {
    LogWarning(
        "slurm", "cannot list the jobs on a drained node; they keep running",
        {{"node", slurm_name}, {"error", !jobs ? jobs.error().message() : FirstLine(jobs->err)}});
    return;
  }
  std::vector<std::string> ids;
  std::size_t start = 0;
  while (start < jobs->out.size()) {
    std::size_t end = jobs->out.find('\n', start);
    if (end == std::string::npos) end = jobs->out.size();
    std::string id = jobs->out.substr(start, end - start);
    start = end + 1;
    // Job ids are digits (an array task: 12_3): anything else is not passed on.
    if (!id.empty() && id.find_first_not_of("0123456789_") == std::string::npos) {
      ids.push_back(std::move(id));
    }
  }
  if (ids.empty()) return;
  const bool requeue = s.job_action == SlurmSettings::JobAction::kRequeue;
  std::string list;
  for (const std::string& id : ids) list += (list.empty() ? "" : ",") + id;
  std::vector<std::string> argv = requeue ? std::vector<std::string>{s.scontrol, "requeue", list}
                                          : std::vector<std::string>{s.scancel, "--full"};
  if (!requeue) argv.insert(argv.end(), ids.begin(), ids.end());
  Result<CommandOutput> run = Call(argv);
  const bool ok = run && run->exit_code == 0;
  LogWarning(
      "slurm",
      requeue ? "requeued the jobs of a drained node" : "cancelled the jobs of a drained node",
      {{"node", slurm_name},
       {"rule", rule},
       {"jobs", list},
       {"ok", ok},
       {"error", ok ? std::string() : (!run ? run.error().message() : FirstLine(run->err))}});
}

std::string SlurmNodeApi::ReasonFor(const std::map<std::string, std::string>& annotations) const {
  std::vector<Reason> reasons;
  if (auto it = annotations.find(options_.annotation_key); it != annotations.end()) {
    if (Result<std::vector<Reason>> decoded = DecodeReasons(it->second)) reasons = *decoded;
  }
  const SlurmSettings& s = options_.settings;
  if (reasons.empty()) return SlurmReasonText(s.reason_prefix, "fault", "", 0, s.reason_max_bytes);
  return SlurmReasonText(s.reason_prefix, reasons.front().rule, reasons.front().summary,
                         reasons.size() - 1, s.reason_max_bytes);
}

Status SlurmNodeApi::Update(const std::string& slurm_name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{options_.settings.scontrol, "update", "NodeName=" + slurm_name};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> run = Call(argv);
  if (!run) return run.error();
  if (run->exit_code != 0) {
    return UnavailableError("scontrol update " + slurm_name + ": " +
                            FirstLine(run->err + run->out));
  }
  return OkStatus();
}

Status SlurmNodeApi::PatchNodeConditions(std::string_view name,
                                         const std::vector<NodeCondition>& /*conditions*/) {
  return FailedPreconditionError("Slurm node " + std::string(name) + " has no conditions");
}

Status SlurmNodeApi::UpdateNode(std::string_view name, const NodeChange& change) {
  // A reservation's fence ends with the write it was taken for.
  struct ReleaseAtEnd {
    ValveRecordFile& valve;
    ~ReleaseAtEnd() { valve.Release(); }
  } release{valve_};
  std::optional<std::string> mapped = names_.ToSlurm(name);
  if (!mapped) return NotFoundError("no Slurm node for " + std::string(name));
  const std::string& slurm_name = *mapped;
  Result<SlurmNode> node = ShowOne(slurm_name);
  if (!node) return node.error();
  if (!change.expected_resource_version.empty() &&
      change.expected_resource_version != Digest(*node)) {
    return AbortedError("Slurm node " + slurm_name + " changed since it was read");
  }
  std::optional<nlohmann::json> extra = ExtraObject(node->extra);
  if (!extra) {
    return FailedPreconditionError("Slurm node " + slurm_name +
                                   "'s Extra field holds text that is not a JSON object; "
                                   "faultline keeps its reasons there and will not overwrite it");
  }
  std::map<std::string, std::string> annotations = Present(*node, std::string(name)).annotations;
  for (const auto& [key, value] : change.annotations) {
    if (value) {
      (*extra)[key] = *value;
      annotations[key] = *value;
    } else {
      extra->erase(key);
      annotations.erase(key);
    }
  }
  const bool drained_by_us = node->Drain() && Ours(*node);
  std::vector<std::string> state_args;
  bool want_drain = drained_by_us;
  if (change.add_taint && !drained_by_us) {
    // Never over an operator's drain or down: their reason stays, and the
    // applier, reading the node again, finds it opted out.
    if (OperatorOwned(*node)) {
      return AbortedError("Slurm node " + slurm_name + " was drained or downed by someone else (" +
                          node->reason + "): faultline leaves it alone");
    }
    state_args = {"State=DRAIN", "Reason=" + ReasonFor(annotations)};
    want_drain = true;
  } else if (change.remove_taint && drained_by_us) {
    // UNDRAIN, not RESUME: a node Slurm holds DOWN stays DOWN.
    state_args = {"State=UNDRAIN"};
    want_drain = false;
  } else if (drained_by_us && !change.annotations.empty()) {
    // The reasons changed: the Reason text follows (no state change).
    if (std::string text = ReasonFor(annotations); text != node->reason) {
      state_args = {"Reason=" + text};
    }
  }
  const std::string extra_text = extra->empty() ? std::string() : extra->dump();
  Status state_status = OkStatus();
  if (!state_args.empty()) state_status = Update(slurm_name, state_args);
  Status extra_status = OkStatus();
  if (extra_text != node->extra) extra_status = Update(slurm_name, {"Extra=" + extra_text});
  const bool new_drain = change.add_taint && !drained_by_us;
  if (state_status.ok() && extra_status.ok()) {
    if (new_drain) ActOnJobs(slurm_name, FirstRule(annotations, options_.annotation_key));
    return OkStatus();
  }
  // scontrol answers "Invalid node state specified" to an UNDRAIN of a node
  // whose slurmd never registered, and yet clears the flag: judge by the
  // node as it now is, not by the exit status.
  Result<SlurmNode> after = ShowOne(slurm_name);
  if (!after) return after.error();
  const bool drain_holds = after->Drain() && Ours(*after);
  if (drain_holds == want_drain && after->extra == extra_text) {
    if (new_drain) ActOnJobs(slurm_name, FirstRule(annotations, options_.annotation_key));
    return OkStatus();
  }
  return state_status.ok() ? extra_status : state_status;
}

Status SlurmNodeApi::CreateEvent(const NodeEvent& event) {
  valve_.Release();  // a refused reservation is followed by its Event: no drain comes
  LogInfo("slurm", "node event",
          {{"node", event.node},
           {"type", event.type},
           {"reason", event.reason},
           {"message", event.message}});
  return OkStatus();
}

Result<SharedRecord> SlurmNodeApi::GetValveRecord() {
  if (options_.settings.valve_record.empty()) {
    return FailedPreconditionError("no slurm.valve_record file: the valve counts per replica");
  }
  return valve_.Get();
}

Status SlurmNodeApi::PutValveRecord(const std::string& value, const std::string& expected_version) {
  if (options_.settings.valve_record.empty()) {
    return FailedPreconditionError("no slurm.valve_record file: the valve counts per replica");
  }
  return valve_.Put(value, expected_version);
}

}  // namespace faultline
