// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/metrics.h"
#include "base/status.h"

namespace httplib {
class Server;
}

namespace faultline {

// What /readyz answers: ready, or not with the reasons ("kafka unreachable").
struct Readiness {
  bool ready = true;
  std::string detail;
};

// The daemons' HTTP side: GET /metrics (Prometheus text), /healthz (the
// process is alive and its threads run) and /readyz (it is doing its job).
// /metrics also carries both answers as the gauges faultline_ready and
// faultline_healthy (1 or 0), for alert rules where no kubelet probes.
//
// This is the one network piece of the matcher library; it lives here because
// both daemons serve it and neither may depend on the other. The `faultline`
// CLI never starts one. It owns one listener thread (and cpp-httplib's worker
// pool), started by Start() and joined by the destructor.
class HttpEndpoint {
 public:
  struct Options {
    std::string address = "0.0.0.0:9400";  // host:port; port 0 picks a free one
  };

  // kInvalidArgument: malformed address; kUnavailable: the port is taken.
  // `registry` and the callbacks must outlive the endpoint; the callbacks run
  // on the endpoint's threads.
  static Result<std::unique_ptr<HttpEndpoint>> Start(
      const Options& options, const MetricsRegistry& registry,
      const std::function<Readiness()>& ready, const std::function<Readiness()>& healthy = {});

  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

 private:
  HttpEndpoint(std::unique_ptr<httplib::Server> server, int port);

  std::unique_ptr<httplib::Server> server_;
  int port_;
  std::thread thread_;
};

}  // namespace faultline
