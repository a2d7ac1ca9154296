// SPDX-License-Identifier: Apache-2.0
// API responses that are not what Kubernetes sends (issue 14, item 4): HTML
// from a proxy, a body larger than the read bound, JSON that is not a Node,
// an error body the size of a log file. Each is a clear error of bounded
// size, read with a bounded buffer, and not retried when retrying cannot help.
// Served over plain HTTP on loopback by cpp-httplib: the TLS path is covered
// by kube_http_test; here only the body matters.
#include <string>
#include <thread>

#include <doctest/doctest.h>
#include <httplib.h>

#include "base/metrics.h"
#include "tainter/kube/kube_node_api.h"
#include "tests/fakes/fake_clock.h"

namespace faultline {
namespace {

constexpr std::size_t kBound = 1u << 20;  // the client's max_response_bytes here

struct HostileServer {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  int requests = 0;  // handled on the server thread; read after the call returns

  HostileServer() {
    auto reply = [this](int status, std::string body, const char* type) {
      return [this, status, body = std::move(body), type](const httplib::Request&,
                                                          httplib::Response& res) {
        ++requests;
        res.status = status;
        res.set_content(body, type);
      };
    };
    server.Get("/api/v1/nodes/html",
               reply(200, "<html><body><h1>Welcome to nginx!</h1></body></html>", "text/html"));
    server.Get("/api/v1/nodes/huge", reply(200, std::string(3 * kBound, ' '), "application/json"));
    // An unterminated string: a JSON parser's error message quotes what it
    // read of the token, all 900 KiB of it.
    server.Get("/api/v1/nodes/longtoken",
               reply(200, "{\"kind\":\"Node\",\"x\":\"" + std::string(900 << 10, 'a') + "\x01",
                     "application/json"));
    server.Get("/api/v1/nodes/array", reply(200, "[1,2,3]", "application/json"));
    server.Get("/api/v1/nodes/error-log", reply(403, std::string(900 << 10, 'e'), "text/plain"));
    server.Get("/api/v1/nodes",
               reply(200, R"({"kind":"NodeList","items":"none"})", "application/json"));
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    // Bound and listening already: a connection waits in the backlog until
    // the accept loop starts.
  }
  ~HostileServer() {
    server.stop();
    thread.join();
  }
};

struct Client {
  FakeClock clock;
  MetricsRegistry metrics;
  std::unique_ptr<KubeNodeApi> api;

  explicit Client(int port) {
    KubeConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(port);
    KubeNodeApi::Options options;
    options.http.max_response_bytes = kBound;
    options.http.qps = 0;
    options.http.sleep = [this](std::chrono::nanoseconds d) { clock.Advance(d); };
    auto made = KubeNodeApi::Create(config, options, clock, metrics);
    REQUIRE(made.ok());
    api = std::move(*made);
  }
};

TEST_CASE("an HTML page where a Node was expected is a clear error, not a crash") {
  HostileServer s;
  Client c(s.port);
  auto node = c.api->GetNode("html");
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().message().find("not JSON") != std::string::npos);
  CHECK(node.error().message().size() < 1024);
}

TEST_CASE("a body over the read bound is cut off at the bound and not retried") {
  HostileServer s;
  Client c(s.port);
  auto node = c.api->GetNode("huge");
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().message().find("response larger than 1048576 bytes") != std::string::npos);
  CHECK(s.requests == 1);  // the same answer would come again
}

TEST_CASE("a parse error quoting a huge token is cut to a bounded message") {
  HostileServer s;
  Client c(s.port);
  auto node = c.api->GetNode("longtoken");
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().message().find("not JSON") != std::string::npos);
  CHECK(node.error().message().size() < 1024);
}

TEST_CASE("JSON that is not a Node, or a list without items, is refused") {
  HostileServer s;
  Client c(s.port);
  auto node = c.api->GetNode("array");
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().code() == StatusCode::kInvalidArgument);
  auto list = c.api->ListNodes("");
  REQUIRE_FALSE(list.ok());
  CHECK(list.error().message().find("no items array") != std::string::npos);
}

TEST_CASE("an error body of almost a MiB is kept to a bounded message with the HTTP status") {
  HostileServer s;
  Client c(s.port);
  auto node = c.api->GetNode("error-log");
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().code() == StatusCode::kPermissionDenied);
  CHECK(node.error().message().find("HTTP 403") != std::string::npos);
  CHECK(node.error().message().size() < 1024);
}

}  // namespace
}  // namespace faultline
