// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_metrics.h"

#include <vector>

namespace faultline {
namespace {

const std::vector<double> kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                            0.5,   1,    2.5,   5,    10};

}  // namespace

KubeMetrics::KubeMetrics(MetricsRegistry& r)
    : throttled(r.GetCounter("faultline_kube_throttled_total",
                             "Kubernetes API requests delayed by the client-side rate limiter")),
      patches(r.GetCounter("faultline_kube_patches_total", "Node JSON patches sent")),
      conflicts(r.GetCounter("faultline_kube_conflicts_total",
                             "Node writes that lost a race and were re-read and retried")),
      registry_(r) {}

Histogram& KubeMetrics::RequestSeconds(const std::string& verb) {
  return registry_.GetHistogram("faultline_kube_request_seconds",
                                "Kubernetes API request latency by verb", kLatencyBounds,
                                {{"verb", verb}});
}

Counter& KubeMetrics::Requests(const std::string& verb, const std::string& code) {
  return registry_.GetCounter("faultline_kube_requests_total",
                              "Kubernetes API requests by verb and code",
                              {{"verb", verb}, {"code", code}});
}

Counter& KubeMetrics::Retries(const std::string& verb, const std::string& reason) {
  return registry_.GetCounter("faultline_kube_retries_total",
                              "Kubernetes API request retries by reason",
                              {{"verb", verb}, {"reason", reason}});
}

}  // namespace faultline
