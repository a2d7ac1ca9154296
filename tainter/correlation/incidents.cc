// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/incidents.h"

#include <algorithm>
#include <cctype>

#include "base/time_format.h"

namespace faultline {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A ReplicaSet/Job pod suffix: 5 lower-case alphanumerics with a digit
// ("x7k2p"), as the API server's generateName makes them.
bool RandomSuffix(const std::string& s) {
  return s.size() == 5 &&
         std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::islower(c) || std::isdigit(c); }) &&
         std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool Role(const std::string& s) {
  static const std::set<std::string> kRoles = {
      "worker", "workers", "master", "launcher", "leader", "follower", "chief", "ps", "rank"};
  return kRoles.count(s) != 0;
}

}  // namespace

std::string IncidentTracker::JobOf(const std::string& ns, const std::string& pod) {
  if (ns.empty() || pod.empty()) return {};
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dash = pod.find('-', start);
    parts.push_back(
        pod.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  while (parts.size() > 1 &&
         (AllDigits(parts.back()) || RandomSuffix(parts.back()) || Role(parts.back()))) {
    parts.pop_back();
  }
  std::string job = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) job += "-" + parts[i];
  return ns + "/" + job;
}

bool IncidentTracker::IsHardwareEvidence(const FaultEvent& e) {
  // ib.port-down is a warning that taints (5 in 24 h): one flap already
  // says where a job's failure came from.
  return e.origin != Origin::kPod && e.action != Action::kIgnore &&
         (e.action == Action::kTaint || e.severity == Severity::kError ||
          e.severity == Severity::kCritical) &&
         e.category != "application" && e.category != "informational";
}

bool IncidentTracker::IsIncidentLine(const FaultEvent& e) const {
  if (e.origin != Origin::kPod) return false;
  for (const std::string& p : options_.rule_prefixes) {
    if (e.rule.rfind(p, 0) == 0) return true;
  }
  return false;
}

void IncidentTracker::AddEvidence(IncidentEvidence ev) {
  auto it = evidence_.find(ev.node);
  if (it == evidence_.end()) {
    if (evidence_.size() >= options_.max_nodes_evidence) evidence_.erase(evidence_.begin());
    it = evidence_.emplace(ev.node, std::deque<IncidentEvidence>{}).first;
  }
  auto& q = it->second;
  q.push_back(std::move(ev));
  std::sort(q.begin(), q.end(),
            [](const IncidentEvidence& a, const IncidentEvidence& b) { return a.at < b.at; });
  while (q.size() > options_.max_evidence_per_node) q.pop_front();
}

bool IncidentTracker::Observe(const FaultEvent& e, TimePoint at) {
  if (IsHardwareEvidence(e)) {
    AddEvidence({e.node, e.rule, e.summary, at});
    return false;
  }
  if (!IsIncidentLine(e)) return false;
  auto ns = e.labels.find("namespace");
  auto pod = e.labels.find("pod");
  if (ns == e.labels.end() || pod == e.labels.end()) return false;
  std::optional<JobOwner> owner;
  if (owner_of_) owner = owner_of_(ns->second, pod->second);
  const std::string job = owner ? ns->second + "/" + owner->name : JobOf(ns->second, pod->second);
  if (job.empty()) return false;
  auto it = open_.find(job);
  if (it != open_.end() && at - it->second.end > options_.window) {
    // A gap longer than the window: that incident is over, a new one starts.
    finished_.push_back(std::move(it->second));
    open_.erase(it);
    it = open_.end();
  }
  if (it == open_.end()) {
    if (open_.size() >= options_.max_open) return true;
    Incident inc;
    inc.job = job;
    if (owner) inc.owner = *owner;
    inc.start = inc.end = at;
    it = open_.emplace(job, std::move(inc)).first;
  }
  Incident& inc = it->second;
  if (owner && inc.owner.name.empty()) inc.owner = *owner;  // a line read before the pod watch
  inc.start = std::min(inc.start, at);
  inc.end = std::max(inc.end, at);
  inc.nodes.insert(e.node);
  inc.rules.insert(e.rule);
  ++inc.lines;
  return true;
}

void IncidentTracker::Attribute(Incident& inc) const {
  inc.id = inc.job + "@" + FormatRfc3339(inc.start);
  inc.evidence.clear();
  for (const std::string& node : inc.nodes) {
    auto it = evidence_.find(node);
    if (it == evidence_.end()) continue;
    for (const IncidentEvidence& ev : it->second) {
      if (ev.at >= inc.start - options_.lookback && ev.at <= inc.end) inc.evidence.push_back(ev);
    }
  }
  std::sort(inc.evidence.begin(), inc.evidence.end(),
            [](const IncidentEvidence& a, const IncidentEvidence& b) { return a.at < b.at; });
  inc.attributed = inc.evidence.empty() ? std::string() : inc.evidence.front().node;
}

std::vector<Incident> IncidentTracker::Close(TimePoint now, bool all) {
  std::vector<Incident> closed;
  for (Incident& inc : finished_) {
    if (static_cast<int>(inc.nodes.size()) < options_.min_nodes) continue;
    Attribute(inc);
    closed.push_back(std::move(inc));
  }
  finished_.clear();
  for (auto it = open_.begin(); it != open_.end();) {
    if (!all && now - it->second.end <= options_.window) {
      ++it;
      continue;
    }
    Incident inc = std::move(it->second);
    it = open_.erase(it);
    if (static_cast<int>(inc.nodes.size()) < options_.min_nodes) continue;
    Attribute(inc);
    closed.push_back(std::move(inc));
  }
  // Evidence older than any incident could look back to.
  for (auto it = evidence_.begin(); it != evidence_.end();) {
    auto& q = it->second;
    while (!q.empty() && now - q.front().at > options_.lookback + 4 * options_.window) {
      q.pop_front();
    }
    it = q.empty() ? evidence_.erase(it) : std::next(it);
  }
  std::sort(closed.begin(), closed.end(),
            [](const Incident& a, const Incident& b) { return a.start < b.start; });
  return closed;
}

std::vector<Incident> IncidentTracker::Open() const {
  std::vector<Incident> out;
  for (const auto& [job, inc] : open_) {
    if (static_cast<int>(inc.nodes.size()) < options_.min_nodes) continue;
    Incident copy = inc;
    Attribute(copy);
    out.push_back(std::move(copy));
  }
  return out;
}

std::string FormatIncident(const Incident& inc) {
  std::string out = FormatRfc3339(inc.start) + "  " + inc.job + "  " +
                    std::to_string(inc.nodes.size()) + " nodes  " + std::to_string(inc.lines) +
                    " lines  ";
  out += inc.attributed.empty() ? "attributed: none (no hardware evidence)"
                                : "attributed: " + inc.attributed;
  if (!inc.owner.name.empty()) out += "\n    owner: " + inc.owner.kind + "/" + inc.owner.name;
  std::string nodes;
  int shown = 0;
  for (const std::string& n : inc.nodes) {
    if (shown++ == 8) {
      nodes += ",...";
      break;
    }
    nodes += (nodes.empty() ? "" : ",") + n;
  }
  out += "\n    nodes: " + nodes;
  std::string rules;
  for (const std::string& r : inc.rules) rules += (rules.empty() ? "" : ",") + r;
  out += "\n    lines: " + rules;
  for (const IncidentEvidence& ev : inc.evidence) {
    out += "\n    evidence: " + FormatRfc3339(ev.at) + " " + ev.node + " " + ev.rule + ": " +
           ev.summary.substr(0, 200);
  }
  return out;
}

}  // namespace faultline
