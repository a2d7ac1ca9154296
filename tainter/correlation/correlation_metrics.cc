// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/correlation_metrics.h"

namespace faultline {
namespace {

Counter& IncidentsOf(MetricsRegistry& r, const char* attributed) {
  return r.GetCounter("faultline_tainter_incidents_total", "incidents closed (one job, many nodes)",
                      {{"attributed", attributed}});
}

}  // namespace

CorrelationMetrics::CorrelationMetrics(MetricsRegistry& r)
    : read_errors(r.GetCounter("faultline_tainter_correlation_errors_total",
                               "errors reading every partition for correlation", {})),
      identities(r.GetCounter("faultline_tainter_identities_total", "node identities read", {})),
      identities_rejected(r.GetCounter("faultline_tainter_identities_rejected_total",
                                       "identity messages that do not parse", {})),
      incidents_attributed(IncidentsOf(r, "true")),
      incidents_unattributed(IncidentsOf(r, "false")),
      registry_(r) {}

Counter& CorrelationMetrics::Attributions(const std::string& rule) {
  return registry_.GetCounter("faultline_tainter_attributions_total",
                              "accusations by peers handed to the policy", {{"rule", rule}});
}

}  // namespace faultline
