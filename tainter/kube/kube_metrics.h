// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/metrics.h"

namespace faultline {

// The Kubernetes client's metric families (faultline_kube_*), named once so
// that the HTTP client and the node API hold references instead of looking
// names up by string. Every name is documented in tainter/README.md
// ("Metrics, health"). Series labelled by verb, code or reason are created on
// first use through the registry. Thread-safe (the series are atomics).
class KubeMetrics {
 public:
  explicit KubeMetrics(MetricsRegistry& registry);

  Histogram& RequestSeconds(const std::string& verb);
  Counter& Requests(const std::string& verb, const std::string& code);
  Counter& Retries(const std::string& verb, const std::string& reason);

  Counter& throttled;  // requests delayed by the client-side rate limiter
  Counter& patches;    // node JSON patches sent
  Counter& conflicts;  // node writes that lost a race and were re-read and retried

 private:
  MetricsRegistry& registry_;
};

}  // namespace faultline
