// SPDX-License-Identifier: Apache-2.0
#include "tainter/remediation/remediation_metrics.h"

namespace faultline {
namespace {

Counter& Cordons(MetricsRegistry& r, const char* op) {
  return r.GetCounter("faultline_tainter_cordons_total", "Cordons by faultline, by what happened",
                      {{"op", op}});
}

Counter& Drains(MetricsRegistry& r, const char* state) {
  return r.GetCounter("faultline_tainter_drains_total", "Drains by faultline", {{"state", state}});
}

}  // namespace

RemediationMetrics::RemediationMetrics(MetricsRegistry& r)
    : cordoned(Cordons(r, "cordon")),
      found_cordoned(Cordons(r, "found_cordoned")),
      uncordoned(Cordons(r, "uncordon")),
      drains_started(Drains(r, "started")),
      drains_completed(Drains(r, "completed")),
      drains_timed_out(Drains(r, "timed_out")),
      drains_waiting(
          r.GetCounter("faultline_tainter_drains_waiting_total",
                       "Ticks a drain waited for a slot (remediation.drain.max_concurrent)")),
      drains_running(r.GetGauge(
          "faultline_tainter_drains_running",
          "Nodes of the cluster draining (faultline's drain mark `running`), last read")),
      drains_active(
          r.GetGauge("faultline_tainter_drains_active", "Drains this replica is running")),
      registry_(r) {}

Counter& RemediationMetrics::Errors(const std::string& code) {
  return registry_.GetCounter("faultline_tainter_remediation_errors_total",
                              "Cordon, drain and uncordon calls that failed and will be retried",
                              {{"code", code}});
}

Counter& RemediationMetrics::Evictions(const std::string& outcome) {
  return registry_.GetCounter("faultline_tainter_evictions_total", "Eviction requests by outcome",
                              {{"outcome", outcome}});
}

}  // namespace faultline
