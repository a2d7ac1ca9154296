// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/correlator.h"

#include <algorithm>

#include "base/vocabulary.h"

namespace faultline {

Correlator::Correlator(Options options)
    : pods_(options.pods), peers_(options.peers), incidents_(std::move(options.incidents)) {
  incidents_.SetOwnerOf(
      [this](const std::string& ns, const std::string& pod) { return pods_.OwnerOf(ns, pod); });
}

Correlator::TimePoint Correlator::EventTime(const FaultEvent& e) {
  return e.log_time != TimePoint{} ? e.log_time : e.detected_time;
}

void Correlator::ObserveIdentity(const NodeIdentity& id) {
  std::vector<std::string> all = id.addresses;
  all.insert(all.end(), id.gids.begin(), id.gids.end());
  if (!id.hostname.empty() && id.hostname != id.node) all.push_back(id.hostname);
  addresses_.Set(AddressBook::Witness::kIdentity, id.node, all);
}

std::optional<std::string> Correlator::Accused(const FaultEvent& e) const {
  if (e.peer.empty()) return std::nullopt;
  auto node = addresses_.Resolve(e.peer);
  if (!node) node = pods_.NodeOf(e.peer);
  if (!node || *node == e.node) return std::nullopt;
  return node;
}

void Correlator::Observe(const FaultEvent& e) {
  const TimePoint at = EventTime(e);
  if (!e.peer.empty()) {
    if (auto accused = Accused(e)) {
      peers_.Report(e, *accused, at);
    } else {
      ++unresolved_;
    }
  }
  incidents_.Observe(e, at);
}

FaultEvent Correlator::BlameEvent(const PeerAttribution::Blame& b, TimePoint now) {
  FaultEvent e;
  e.node = b.accused;
  e.rule = b.rule + ".by-peers";
  e.source = "correlation";
  e.origin = Origin::kAny;
  e.action = Action::kTaint;
  e.severity = Severity::kWarning;
  const FaultEvent* first = b.evidence.empty() ? nullptr : &b.evidence.front();
  for (const FaultEvent& ev : b.evidence) {
    if (static_cast<int>(ev.severity) > static_cast<int>(e.severity)) e.severity = ev.severity;
  }
  if (first) {
    e.pack = first->pack;
    e.category = first->category;
    e.expire = first->expire;
  }
  std::string names;
  for (std::size_t i = 0; i < b.reporter_names.size() && i < 5; ++i) {
    names += (names.empty() ? "" : ", ") + b.reporter_names[i];
  }
  if (b.reporter_names.size() > 5) names += ", ...";
  e.summary =
      "blamed by " + std::to_string(b.reporters) + " peers for " + b.rule + " (" + names + ")";
  std::string message;
  for (const FaultEvent& ev : b.evidence) {
    message += (message.empty() ? "" : " | ") + ev.node + ": " + ev.message;
  }
  e.message = TruncateUtf8(message, FaultEvent::kMaxMessageBytes);
  e.fields = {{"reporters", std::to_string(b.reporters)}};
  if (first && !first->peer.empty()) e.fields["peer"] = first->peer;
  e.log_time = b.last;
  e.detected_time = now;
  // One id per accusation and count: a larger count is a new decision (the
  // reason's summary follows it); the same one rebuilt after a restart is
  // recognised by the dedupe set it would meet.
  const auto first_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(b.first.time_since_epoch()).count();
  e.id = MakeEventId(b.accused, "correlation",
                     std::to_string(first_ms) + "#" + std::to_string(b.reporters), e.rule);
  return e;
}

std::vector<FaultEvent> Correlator::TakeBlames(
    TimePoint now, const std::function<bool(const std::string&)>& owns) {
  // Being blamed by its peers is evidence for the job's incident too, once
  // per standing accusation (one that lapses and comes back is new).
  std::set<std::pair<std::string, std::string>> standing;
  for (const PeerAttribution::Blame& b : peers_.Standing(now)) {
    standing.insert({b.accused, b.rule});
    if (evidenced_.count({b.accused, b.rule})) continue;
    const FaultEvent e = BlameEvent(b, now);
    incidents_.AddEvidence({b.accused, e.rule, e.summary, b.first});
  }
  evidenced_ = std::move(standing);
  std::vector<FaultEvent> out;
  for (const PeerAttribution::Blame& b : peers_.TakeDue(now, owns)) {
    out.push_back(BlameEvent(b, now));
  }
  return out;
}

}  // namespace faultline
