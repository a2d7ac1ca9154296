// SPDX-License-Identifier: Apache-2.0
#include "endpoint/http_endpoint.h"

#include <httplib.h>

namespace faultline {
namespace {

// One gauge in Prometheus text format.
std::string GaugeText(const char* name, const char* help, bool value) {
  return std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name +
         (value ? " 1\n" : " 0\n");
}

bool Passes(const std::function<Readiness()>& check) { return !check || check().ready; }

// What /readyz and /healthz would answer, as gauges on /metrics: an alert
// rule then sees "not ready" where no kubelet probes the process (systemd, a
// Slurm node) and without kube-state-metrics.
std::string ProbeGauges(const std::function<Readiness()>& ready,
                        const std::function<Readiness()>& healthy) {
  return GaugeText("faultline_ready", "1 when /readyz answers 200 (doing its job)", Passes(ready)) +
         GaugeText("faultline_healthy", "1 when /healthz answers 200 (its threads run)",
                   Passes(healthy));
}

}  // namespace

HttpEndpoint::HttpEndpoint(std::unique_ptr<httplib::Server> server, int port)
    : server_(std::move(server)), port_(port) {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

HttpEndpoint::~HttpEndpoint() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const Options& options, const MetricsRegistry& registry,
    const std::function<Readiness()>& ready, const std::function<Readiness()>& healthy) {
  const auto colon = options.address.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgumentError("metrics address '" + options.address + "' is not host:port");
  }
  std::string host = options.address.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    port = std::stoi(options.address.substr(colon + 1));
  } catch (const std::exception&) {
    return InvalidArgumentError("metrics address '" + options.address + "' has no valid port");
  }
  if (port < 0 || port > 65535) {
    return InvalidArgumentError("metrics port in '" + options.address + "' is out of range");
  }

  auto server = std::make_unique<httplib::Server>();
  server->Get("/metrics",
              [&registry, ready, healthy](const httplib::Request&, httplib::Response& res) {
                res.set_content(registry.RenderPrometheus() + ProbeGauges(ready, healthy),
                                "text/plain; version=0.0.4; charset=utf-8");
              });
  auto answer = [](const std::function<Readiness()>& check, httplib::Response& res) {
    Readiness r = check ? check() : Readiness{};
    res.status = r.ready ? 200 : 503;
    res.set_content(r.ready ? "ok\n" : r.detail + "\n", "text/plain");
  };
  server->Get("/readyz", [ready, answer](const httplib::Request&, httplib::Response& res) {
    answer(ready, res);
  });
  server->Get("/healthz", [healthy, answer](const httplib::Request&, httplib::Response& res) {
    answer(healthy, res);
  });

  int bound = port;
  if (port == 0) {
    bound = server->bind_to_any_port(host);
    if (bound < 0) return UnavailableError("cannot listen on " + options.address);
  } else if (!server->bind_to_port(host, port)) {
    return UnavailableError("cannot listen on " + options.address + " (in use?)");
  }
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(server), bound));
}

}  // namespace faultline
