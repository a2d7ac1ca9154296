// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/metrics.h"

namespace faultline {

// Fleet correlation's metric families, named once so that the consumer and
// FleetCorrelation hold references instead of looking names up by string.
// Every name is documented in tainter/README.md ("Fleet correlation").
// Attributions, labelled by rule, are created on first use. Thread-safe (the
// series are atomics).
class CorrelationMetrics {
 public:
  explicit CorrelationMetrics(MetricsRegistry& registry);

  Counter& Attributions(const std::string& rule);  // accusations by peers handed to the policy
  Counter& Incidents(bool attributed) {
    return attributed ? incidents_attributed : incidents_unattributed;
  }

  Counter& read_errors;          // errors reading every partition for correlation
  Counter& identities;           // node identities read
  Counter& identities_rejected;  // identity messages that do not parse
  Counter& incidents_attributed;
  Counter& incidents_unattributed;

 private:
  MetricsRegistry& registry_;
};

}  // namespace faultline
