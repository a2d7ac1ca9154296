// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_http.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <mutex>

#include <doctest/doctest.h>

#include "base/log.h"
#include "base/log_testing.h"
#include "tainter/kube/kube_token_testing.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_pki.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {
namespace {

// Captures every log line while alive.
class LogCapture {
 public:
  LogCapture() {
    SetLogLevel(LogLevel::kDebug);
    SetLogSinkForTest([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() {
    SetLogSinkForTest(nullptr);
    SetLogLevel(LogLevel::kInfo);
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_CASE("TLS verification fails against an unknown CA and succeeds with the right one") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  SUBCASE("the server's CA") { CHECK(f.Api().GetNode("gpu-1").ok()); }
  SUBCASE("another CA: refused before any request is sent, and not retried") {
    auto other = GenerateTestPki();
    REQUIRE(other.ok());
    f.config.ca_pem = other->ca_cert_pem;
    auto node = f.Api().GetNode("gpu-1");
    CHECK(node.error().code() == StatusCode::kUnavailable);
    CHECK(node.error().message().find("TLS") != std::string::npos);
    CHECK(f.server->Requests().empty());
    CHECK(f.sleeps.empty());
  }
  SUBCASE("no CA at all: the system trust store does not know the test CA") {
    f.config.ca_pem.clear();
    CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kUnavailable);
    CHECK(f.server->Requests().empty());
  }
}

TEST_CASE(
    "verification is skipped only when the config says insecure-skip-tls-verify, with a warning") {
  LogCapture logs;
  KubeFixture f;
  f.server->AddNode("gpu-1");
  auto other = GenerateTestPki();
  REQUIRE(other.ok());
  f.config.ca_pem = other->ca_cert_pem;  // wrong CA, but verification is off
  f.config.insecure_skip_tls_verify = true;
  CHECK(f.Api().GetNode("gpu-1").ok());
  bool warned = false;
  for (const auto& line : logs.lines()) {
    if (line.find("\"level\":\"warn\"") != std::string::npos &&
        line.find("insecure-skip-tls-verify") != std::string::npos) {
      warned = true;
    }
  }
  CHECK(warned);
}

TEST_CASE("a client certificate signed by the cluster CA authenticates without a token") {
  KubeFixture f;
  f.server->AddNode("gpu-1");
  f.config.token.clear();
  f.config.client_cert_pem = f.server->pki().client_cert_pem;
  f.config.client_key_pem = f.server->pki().client_key_pem;
  CHECK(f.Api().GetNode("gpu-1").ok());
  CHECK_FALSE(f.server->Requests().at(0).bearer_token);
}

TEST_CASE(
    "a rotated token file is picked up: on change, and after a 401 when the change went unseen") {
  TempDir dir;
  KubeFixture f;
  f.server->AddNode("gpu-1");
  f.server->SetToken("token-one");
  const std::string file = dir.Write("token", "token-one\n");
  f.config.token.clear();
  f.config.token_file = file;
  REQUIRE(f.Api().GetNode("gpu-1").ok());

  // The kubelet rotates the projected token: the file changes.
  f.server->SetToken("token-two-longer");
  dir.Write("token", "token-two-longer\n");
  REQUIRE(f.Api().GetNode("gpu-1").ok());
  CHECK(f.server->Requests().back().status == 200);
  CHECK(f.server->CountRequests("GET") == 2);  // no 401 on the way

  // A change the stat cannot see (same size, mtime put back): the 401 makes
  // the client re-read the file once and retry.
  struct stat before {};
  REQUIRE(::stat(file.c_str(), &before) == 0);
  f.server->SetToken("token-2wo-longer");
  dir.Write("token", "token-2wo-longer\n");
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, file.c_str(), times, 0) == 0);
  REQUIRE(f.Api().GetNode("gpu-1").ok());
  auto requests = f.server->Requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[2].status == 401);
  CHECK(requests[3].status == 200);
  CHECK(f.metrics.CounterValue("faultline_kube_retries_total",
                               {{"verb", "get"}, {"reason", "unauthorized"}}) == 1);

  SUBCASE("a token that is really wrong still ends in kUnauthenticated, after one retry") {
    f.server->SetToken("something-else");
    CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kUnauthenticated);
    CHECK(f.server->CountRequests("GET") == 6);
  }
}

TEST_CASE("the token source re-reads the file at least every interval") {
  TempDir dir;
  FakeClock clock;
  const std::string file = dir.Write("token", "a");
  KubeTokenSource tokens("", file, std::chrono::seconds(60), clock);
  CHECK(*tokens.Token() == "a");
  CHECK(*tokens.Token() == "a");
  CHECK(KubeTokenSourceTesting::Reads(tokens) == 1);
  clock.Advance(std::chrono::seconds(61));
  CHECK(*tokens.Token() == "a");
  CHECK(KubeTokenSourceTesting::Reads(tokens) == 2);
  SUBCASE("a vanished file keeps the last good token") {
    std::filesystem::remove(file);
    CHECK(*tokens.Token(true) == "a");
  }
  SUBCASE("no file at first is kUnauthenticated") {
    KubeTokenSource missing("", dir / "nope", std::chrono::seconds(60), clock);
    CHECK(missing.Token().error().code() == StatusCode::kUnauthenticated);
  }
}

TEST_CASE("no token or private key ever appears in a log line") {
  LogCapture logs;
  KubeFixture f;
  f.server->AddNode("gpu-1");
  const std::string secret = "s3cr3t-token-value-for-the-log-test";
  f.server->SetToken(secret);
  f.config.token = secret;
  f.config.insecure_skip_tls_verify = true;
  f.config.client_cert_pem = f.server->pki().client_cert_pem;
  f.config.client_key_pem = f.server->pki().client_key_pem;
  REQUIRE(f.Api().GetNode("gpu-1").ok());
  f.server->FailNext(2, 503);
  f.server->FailNext(1, 429);
  REQUIRE(f.Api().GetNode("gpu-1").ok());
  f.server->SetToken("rotated");
  CHECK(f.Api().GetNode("gpu-1").error().code() == StatusCode::kUnauthenticated);
  NodeChange change;
  change.add_taint = OurTaint();
  CHECK(f.Api().UpdateNode("gpu-1", change).code() == StatusCode::kUnauthenticated);

  auto lines = logs.lines();
  CHECK(lines.size() >= 3);  // ready, insecure warning, retries at debug
  // A distinctive slice of the key's base64 body.
  const std::string& key = f.server->pki().client_key_pem;
  const std::string key_slice = key.substr(key.find('\n') + 1, 24);
  for (const auto& line : lines) {
    CHECK_MESSAGE(line.find(secret) == std::string::npos, line);
    CHECK_MESSAGE(line.find(key_slice) == std::string::npos, line);
    CHECK_MESSAGE(line.find("PRIVATE KEY") == std::string::npos, line);
  }
}

TEST_CASE("TokenBucket allows a burst, then qps, and refuses waits past the bound") {
  FakeClock clock;
  TokenBucket bucket(/*qps=*/5, /*burst=*/2, clock);
  using std::chrono::milliseconds;
  CHECK(*bucket.Reserve(milliseconds(0)) == milliseconds(0));
  CHECK(*bucket.Reserve(milliseconds(0)) == milliseconds(0));
  CHECK_FALSE(bucket.Reserve(milliseconds(100)).has_value());  // would need 200 ms
  CHECK(*bucket.Reserve(milliseconds(1000)) == milliseconds(200));
  CHECK(*bucket.Reserve(milliseconds(1000)) == milliseconds(400));  // queued behind the last
  clock.Advance(std::chrono::seconds(10));
  CHECK(*bucket.Reserve(milliseconds(0)) == milliseconds(0));
  TokenBucket unlimited(0, 1, clock);
  for (int i = 0; i < 100; ++i) CHECK(*unlimited.Reserve(milliseconds(0)) == milliseconds(0));
}

TEST_CASE("Backoff grows exponentially to its cap, with delays anywhere up to the ceiling") {
  using std::chrono::milliseconds;
  Backoff backoff(milliseconds(200), milliseconds(10'000), 7);
  CHECK(backoff.Ceiling(0) == milliseconds(200));
  CHECK(backoff.Ceiling(1) == milliseconds(400));
  CHECK(backoff.Ceiling(5) == milliseconds(6400));
  CHECK(backoff.Ceiling(6) == milliseconds(10'000));
  CHECK(backoff.Ceiling(1000) == milliseconds(10'000));
  milliseconds low = milliseconds::max(), high{0};
  for (int i = 0; i < 1000; ++i) {
    milliseconds d = backoff.Delay(3);
    low = std::min(low, d);
    high = std::max(high, d);
    REQUIRE(d <= milliseconds(1600));
  }
  CHECK(low < milliseconds(200));  // full jitter reaches near zero
  CHECK(high > milliseconds(1400));
}

TEST_CASE("StatusFromResponse maps HTTP codes and keeps the server's message") {
  auto code = [](long status) { return StatusFromResponse({status, "{}"}, "x").code(); };
  CHECK(code(400) == StatusCode::kInvalidArgument);
  CHECK(code(401) == StatusCode::kUnauthenticated);
  CHECK(code(403) == StatusCode::kPermissionDenied);
  CHECK(code(404) == StatusCode::kNotFound);
  CHECK(code(409) == StatusCode::kAborted);
  CHECK(code(422) == StatusCode::kInvalidArgument);
  CHECK(code(429) == StatusCode::kUnavailable);
  CHECK(code(503) == StatusCode::kUnavailable);
  CHECK(code(302) == StatusCode::kInternal);
  Status s = StatusFromResponse({404, R"({"kind":"Status","message":"nodes \"a\" not found"})"},
                                "get node a");
  CHECK(s.message() == "get node a: HTTP 404: nodes \"a\" not found");
}

}  // namespace
}  // namespace faultline
