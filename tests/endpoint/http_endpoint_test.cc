// SPDX-License-Identifier: Apache-2.0
// The daemons' HTTP endpoint over real HTTP: what /readyz and /healthz answer
// is also on /metrics (faultline_ready, faultline_healthy), because the
// alert rules in deploy/monitoring/ read readiness from there.
#include "endpoint/http_endpoint.h"

#include <atomic>
#include <string>

#include <doctest/doctest.h>
#include <httplib.h>

namespace faultline {
namespace {

struct Probe {
  int status = 0;
  std::string body;
};

Probe Get(int port, const char* path) {
  httplib::Client client("127.0.0.1", port);
  auto res = client.Get(path);
  REQUIRE(res);
  return {res->status, res->body};
}

TEST_CASE("metrics carry what readyz and healthz answer, at every scrape") {
  MetricsRegistry registry;
  registry.GetCounter("faultline_test_total", "a counter").Inc();
  std::atomic<bool> ready{false};
  std::atomic<bool> healthy{true};
  auto endpoint = HttpEndpoint::Start(
      {.address = "127.0.0.1:0"}, registry,
      [&ready] {
        return ready ? Readiness{} : Readiness{false, "kafka unreachable"};
      },
      [&healthy] {
        return healthy ? Readiness{} : Readiness{false, "a thread stopped"};
      });
  REQUIRE(endpoint);
  const int port = (*endpoint)->port();

  Probe readyz = Get(port, "/readyz");
  CHECK(readyz.status == 503);
  CHECK(readyz.body == "kafka unreachable\n");
  Probe metrics = Get(port, "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("faultline_test_total 1\n") != std::string::npos);
  CHECK(metrics.body.find("# TYPE faultline_ready gauge\nfaultline_ready 0\n") !=
        std::string::npos);
  CHECK(metrics.body.find("# TYPE faultline_healthy gauge\nfaultline_healthy 1\n") !=
        std::string::npos);

  ready = true;
  healthy = false;
  CHECK(Get(port, "/readyz").status == 200);
  CHECK(Get(port, "/healthz").status == 503);
  metrics = Get(port, "/metrics");
  CHECK(metrics.body.find("\nfaultline_ready 1\n") != std::string::npos);
  CHECK(metrics.body.find("\nfaultline_healthy 0\n") != std::string::npos);
}

TEST_CASE("without a health check the process counts as healthy") {
  MetricsRegistry registry;
  auto endpoint =
      HttpEndpoint::Start({.address = "127.0.0.1:0"}, registry, [] { return Readiness{}; });
  REQUIRE(endpoint);
  Probe metrics = Get((*endpoint)->port(), "/metrics");
  CHECK(metrics.body.find("faultline_ready 1\n") != std::string::npos);
  CHECK(metrics.body.find("faultline_healthy 1\n") != std::string::npos);
}

}  // namespace
}  // namespace faultline
