// SPDX-License-Identifier: Apache-2.0
// What fleet correlation costs per event, beside what the tainter already
// spends per event (bench/README.md, "correlation_bench"):
//   parse      ParseFaultEvent(EventFields::kCheckOnly) of the Kafka value, as
//              the correlation consumer reads it (every replica parses every
//              partition's events once more for correlation)
//   parse-all  ParseFaultEvent with the captures kept (the deciding consumer's)
//   correlate  Correlator::Accused + Observe, TakeBlames/TakeIncidents each
//              1,000 events (address book, distinct reporters, incidents)
//   policy     Policy::Decide of the same events (the peer: the tainter's
//              existing per-event decision, no API calls)
// A simulated fleet: 1,024 nodes in 16 jobs of 64; 40% IB completion errors
// naming a peer (by IP or GID), 50% NCCL watchdog lines, 10% hardware; one
// job failing at a time, an event every 5 ms.
//
//   correlation_bench [EVENTS]   (default 200,000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/fault_event.h"
#include "tainter/core/policy.h"
#include "tainter/correlation/correlator.h"

namespace faultline {
namespace {

constexpr int kNodes = 1024;

std::vector<FaultEvent> MakeEvents(int n) {
  std::mt19937 rng(1);
  std::vector<FaultEvent> out;
  const auto t0 = std::chrono::system_clock::now();
  for (int i = 0; i < n; ++i) {
    // One job at a time fails (5,000 events, then it is quiet for 75,000:
    // longer than the incident window, so its incident closes).
    const int node = ((i / 5000) % (kNodes / 64)) * 64 + static_cast<int>(rng() % 64);
    const int job = node / 64;
    FaultEvent e;
    e.node = "gpu-" + std::to_string(node);
    e.id = "ev-" + std::to_string(i);
    e.source = "podlog";
    e.origin = Origin::kPod;
    e.log_time = e.detected_time = t0 + std::chrono::milliseconds(5 * i);
    e.labels = {{"namespace", "ml"},
                {"pod", "job" + std::to_string(job) + "-worker-" + std::to_string(node % 64)}};
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 4) {
      const int peer = job * 64 + static_cast<int>(rng() % 4);  // a few accused per job
      e.rule = "nccl.ib-completion-error";
      e.action = Action::kTaint;
      e.severity = Severity::kError;
      e.category = "network";
      e.peer = (i % 2) ? "10.0." + std::to_string(peer / 256) + "." + std::to_string(peer % 256)
                       : "fe80::2:c903:31:" + std::to_string(1000 + peer);
      e.fields = {{"peer", e.peer}, {"hca", "mlx5_3"}};
      e.threshold = EventThreshold{3, std::chrono::hours(6), {"hca"}};
      e.expire = std::chrono::hours(24);
      e.message = "NCCL WARN NET/IB : Got completion from peer " + e.peer +
                  "<33941> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_3";
    } else if (kind < 9) {
      e.rule = "nccl.watchdog-timeout";
      e.action = Action::kEvent;
      e.category = "application";
      e.message =
          "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88213, "
          "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600007 milliseconds before timing out.";
    } else {
      e.rule = "ib.port-down";
      e.origin = Origin::kIbCounters;
      e.source = "ibcounters";
      e.labels.clear();
      e.action = Action::kTaint;
      e.category = "network";
      e.threshold = EventThreshold{5, std::chrono::hours(24), {"device", "port"}};
      e.message = "mlx5_3 port 1 state ACTIVE -> DOWN";
    }
    e.summary = e.rule + " on " + e.node;
    out.push_back(std::move(e));
  }
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Run(int n) {
  const std::vector<FaultEvent> events = MakeEvents(n);
  std::vector<std::string> wire;
  wire.reserve(events.size());
  for (const FaultEvent& e : events) wire.push_back(SerializeFaultEvent(e));

  auto start = std::chrono::steady_clock::now();
  std::size_t parsed = 0;
  for (const std::string& w : wire) {
    parsed += ParseFaultEvent(w, EventFields::kCheckOnly).ok() ? 1 : 0;
  }
  const double parse_s = Seconds(start);
  start = std::chrono::steady_clock::now();
  std::size_t parsed_all = 0;
  for (const std::string& w : wire) parsed_all += ParseFaultEvent(w).ok() ? 1 : 0;
  const double parse_all_s = Seconds(start);

  Correlator c({});
  for (int i = 0; i < kNodes; ++i) {
    const std::string node = "gpu-" + std::to_string(i);
    c.addresses().Set(AddressBook::Witness::kNodeStatus, node,
                      {"10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256)});
    c.ObserveIdentity({node, node, "b", {}, {"fe80::2:c903:31:" + std::to_string(1000 + i)}, {}});
  }
  start = std::chrono::steady_clock::now();
  std::size_t set_aside = 0;
  std::size_t blames = 0;
  std::size_t incidents = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    set_aside += c.Accused(events[i]) ? 1 : 0;
    c.Observe(events[i]);
    if (i % 1000 == 999) {
      const auto now = events[i].log_time;
      blames += c.TakeBlames(now).size();
      incidents += c.TakeIncidents(now).size();
    }
  }
  const double correlate_s = Seconds(start);

  Policy::Options po;
  po.max_fraction = 1.0;
  po.per_rule_max_fraction = 1.0;
  po.max_new_taints = 0;
  Policy policy(po, RealClock());
  for (int i = 0; i < kNodes; ++i) policy.SetNode("gpu-" + std::to_string(i), true, false);
  start = std::chrono::steady_clock::now();
  std::size_t taints = 0;
  for (const FaultEvent& e : events) {
    taints += policy.Decide(e).outcome == DecisionOutcome::kTaint ? 1 : 0;
  }
  const double policy_s = Seconds(start);

  auto rate = [&](double s) { return static_cast<double>(n) / s; };
  std::printf(
      "events: %d (parsed %zu, %zu with captures; %zu set aside as a peer's fault; %zu accusations "
      "due; "
      "%zu incidents closed; policy taints %zu)\n",
      n, parsed, parsed_all, set_aside, blames, incidents, taints);
  std::printf("%-10s %12s %12s %10s\n", "stage", "events/s", "us/event", "vs policy");
  for (const auto& [name, s] : {std::pair<const char*, double>{"parse", parse_s},
                                {"parse-all", parse_all_s},
                                {"correlate", correlate_s},
                                {"policy", policy_s}}) {
    std::printf("%-10s %12.0f %12.3f %9.2fx\n", name, rate(s), 1e6 * s / n, s / policy_s);
  }
  const double per_event = (parse_s + correlate_s) / n;
  for (double eps : {1'000.0, 10'000.0, 100'000.0}) {
    std::printf(
        "at %.0f events/s fleet-wide, correlation (parse + correlate) takes %.2f%% of a "
        "core per replica\n",
        eps, 100.0 * per_event * eps);
  }
  return 0;
}

}  // namespace
}  // namespace faultline

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200'000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: correlation_bench [EVENTS]\n");
    return 2;
  }
  return faultline::Run(n);
}
