// SPDX-License-Identifier: Apache-2.0
// Hung and dropped connections to the Kubernetes API (issue 14): the kube
// client (KubeHttpClient under KubeNodeApi) against the HTTPS API double's
// connection faults (FakeApiServer::kHang, kDrop, kReset).
//
// API-server behaviour these tests rely on (what a stalled kube-apiserver,
// or a load balancer in front of one, does to a client):
//  - hang: the TCP connection and TLS handshake succeed, the request is read,
//    and no byte of answer ever comes; for a watch, not even the headers;
//  - drop: the request is processed (a PATCH is applied and bumps the node's
//    resourceVersion), the status line, headers and Content-Length arrive,
//    then the connection closes half-way through the body; a watch closes
//    right after its headers;
//  - reset: the connection is reset (TCP RST) before any answer;
//  - a JSON patch whose `test` of metadata.resourceVersion no longer holds is
//    refused (422 or 409) and changes nothing, so a retried PATCH whose
//    first copy was applied cannot apply twice.
#include <dirent.h>

#include <chrono>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

int OpenFds() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++n;
    closedir(dir);
  }
  return n;
}

double SecondsSince(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

int Recorded(const FakeApiServer& server, int status) {
  int n = 0;
  for (const auto& r : server.Requests()) n += r.status == status ? 1 : 0;
  return n;
}

int FaultlineTaints(const FakeApiServer& server, const std::string& node) {
  int n = 0;
  for (const auto& t :
       server.GetNodeJson(node)->at("spec").value("taints", nlohmann::json::array())) {
    n += t.value("key", "") == "faultline.dev/faulty" ? 1 : 0;
  }
  return n;
}

KubeNodeApi::Options FastTimeouts() {
  KubeNodeApi::Options o;
  o.http.request_timeout = milliseconds(300);
  o.http.connect_timeout = milliseconds(300);
  o.http.max_attempts = 4;
  return o;
}

TEST_CASE(
    "a hung API server: every attempt ends at request_timeout, retries back off, "
    "the call succeeds once it answers") {
  KubeFixture f(FastTimeouts());
  f.server->AddNode("gpu-1");
  f.server->FailNext(1'000'000, FakeApiServer::kHang);
  const auto start = steady_clock::now();
  auto node = f.Api().GetNode("gpu-1");
  const double took = SecondsSince(start);
  REQUIRE_FALSE(node.ok());
  CHECK(node.error().code() == StatusCode::kUnavailable);
  // max_attempts requests, no more (no storm), each cut at request_timeout.
  CHECK(Recorded(*f.server, FakeApiServer::kHang) == 4);
  CHECK(f.sleeps.size() == 3);  // a backoff between attempts
  for (auto d : f.sleeps) CHECK(d > milliseconds(0));
  CHECK(took >= 4 * 0.3);
  CHECK(took < 4 * 0.3 + 3);
  MESSAGE("figure: 4 hung attempts of request_timeout 300 ms ended the call in " << took << " s");

  f.server->ClearFaults();
  CHECK(f.Api().GetNode("gpu-1").ok());
}

TEST_CASE("a reset connection is retried and the call succeeds") {
  KubeFixture f(FastTimeouts());
  f.server->AddNode("gpu-1");
  f.server->FailNext(2, FakeApiServer::kReset);
  CHECK(f.Api().GetNode("gpu-1").ok());
  CHECK(Recorded(*f.server, FakeApiServer::kReset) == 2);
  CHECK(f.server->CountRequests("GET", "/api/v1/nodes/gpu-1") == 3);
  // Every retry was one of the two resets: the reconnect's resumption of
  // the client's TLS session succeeds (the double once refused it).
  CHECK(f.metrics
            .GetCounter("faultline_kube_retries_total", "",
                        {{"verb", "get"}, {"reason", "connection"}})
            .value() == 2);
}

TEST_CASE("a taint PATCH applied but its answer dropped mid-body: retried, applied once") {
  KubeFixture f(FastTimeouts());
  f.server->AddNode("gpu-1");
  f.server->FailNext(1, FakeApiServer::kDrop, "PATCH");
  NodeChange change;
  change.add_taint = OurTaint();
  change.annotations["faultline.dev/reasons"] = R"([{"rule":"xid-79"}])";
  CHECK(f.Api().UpdateNode("gpu-1", change).ok());
  CHECK(Recorded(*f.server, FakeApiServer::kDrop) == 1);
  CHECK(FaultlineTaints(*f.server, "gpu-1") == 1);
  // The same change again (the tainter's next attempt) changes nothing.
  CHECK(f.Api().UpdateNode("gpu-1", change).ok());
  CHECK(FaultlineTaints(*f.server, "gpu-1") == 1);
}

TEST_CASE("a hung watch ends within request_timeout, not at the watch's own timeout") {
  KubeFixture f(FastTimeouts());
  f.server->AddNode("gpu-1");
  auto listing = f.Api().ListNodesAt("");
  REQUIRE(listing.ok());
  f.server->FailNext(1, FakeApiServer::kHang, "GET", "/api/v1/nodes");
  const auto start = steady_clock::now();
  // The watch may run 10 s (+30 s of slack in StreamWatch) once it streams;
  // without its headers it is a hung request like any other.
  Status s = f.Api().WatchNodes(
      "", listing->resource_version, seconds(10), [](const NodeWatchEvent&) { return true; },
      nullptr);
  const double took = SecondsSince(start);
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(took < 3.5);
  MESSAGE("figure: a hung watch (request_timeout 300 ms) ended in " << took << " s");
  f.server->ClearFaults();
}

TEST_CASE("a watch dropped after its headers ends at once with an error") {
  KubeFixture f(FastTimeouts());
  f.server->AddNode("gpu-1");
  auto listing = f.Api().ListNodesAt("");
  REQUIRE(listing.ok());
  f.server->FailNext(1, FakeApiServer::kDrop, "GET", "/api/v1/nodes");
  const auto start = steady_clock::now();
  Status s = f.Api().WatchNodes(
      "", listing->resource_version, seconds(10), [](const NodeWatchEvent&) { return true; },
      nullptr);
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(SecondsSince(start) < 2);
}

TEST_CASE("hung, dropped and reset connections leak no file descriptors") {
  KubeNodeApi::Options options = FastTimeouts();
  options.http.max_attempts = 8;
  KubeFixture f(options);
  f.server->AddNode("gpu-1");
  REQUIRE(f.Api().GetNode("gpu-1").ok());  // the client's connection is up
  const int before = OpenFds();
  for (int round = 0; round < 5; ++round) {
    f.server->FailNext(2, FakeApiServer::kHang);
    f.server->FailNext(2, FakeApiServer::kReset);
    f.server->FailNext(2, FakeApiServer::kDrop);
    // 6 failed attempts, then the answer (max_attempts 8 here).
    auto& api = f.Api();
    NodeChange change;
    change.annotations["round"] = std::to_string(round);
    CHECK(api.UpdateNode("gpu-1", change).ok());
    f.server->ClearFaults();
  }
  // The double's ends of the hung connections close once their handlers
  // see the faults cleared (they share this process's fd table).
  int after = OpenFds();
  for (int i = 0; i < 40 && after > before + 2; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    after = OpenFds();
  }
  MESSAGE("figure: open fds " << before << " before, " << after << " after 30 faulted requests");
  CHECK(after <= before + 2);  // the server's own and the client's one connection may differ
}

}  // namespace
}  // namespace faultline
