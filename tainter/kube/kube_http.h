// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/status.h"
#include "base/token_bucket.h"
#include "tainter/kube/backoff.h"
#include "tainter/kube/kube_config.h"
#include "tainter/kube/kube_metrics.h"
#include "tainter/kube/kube_token.h"

namespace faultline {

struct LibCurl;

// One HTTP request to the API server.
struct KubeRequest {
  std::string verb;          // metrics label: "get", "list", "patch", "create"
  std::string method;        // "GET", "POST", "PATCH", "PUT", "DELETE"
  std::string path;          // "/api/v1/nodes/gpu-1", query included and escaped
  std::string content_type;  // for a body; empty otherwise
  std::string body;
};

// The API server's answer: any HTTP status the client did not retry away.
struct KubeResponse {
  long status = 0;  // NOLINT(google-runtime-int): libcurl's type
  std::string body;
};

// Talks HTTPS to the API server with libcurl: one easy handle (connections
// and TLS sessions are reused), CURLOPT_NOSIGNAL, a timeout on every
// request, the CA and client certificate from the config as in-memory blobs
// (no key ever touches the disk), and a bearer token from KubeTokenSource.
//
// Send() rate-limits (token bucket, QPS + burst) and retries, within one
// overall deadline per call:
//   429                 waits Retry-After (seconds), or the backoff if absent
//   5xx, connect/read   exponential backoff with full jitter, capped
//   401                 re-reads the token file once and retries once
// Everything else (2xx, 4xx) is returned to the caller as a KubeResponse.
//
// Errors: kUnavailable (retries exhausted, deadline reached, rate-limit wait
// too long, TLS handshake or verification failed), kUnauthenticated (no
// readable token file). Messages never contain the token or keys.
//
// Metrics (in the injected registry):
//   faultline_kube_requests_total{verb,code}   code = HTTP status or "error"
//   faultline_kube_request_seconds{verb}       latency histogram
//   faultline_kube_retries_total{verb,reason}  reason = 429 | 5xx | connection | unauthorized
//   faultline_kube_throttled_total             requests that waited for the rate limiter
//
// Thread-safety: one thread at a time. The Clock and MetricsRegistry must
// outlive the client.
class KubeHttpClient {
 public:
  struct Options {
    std::chrono::milliseconds request_timeout{10'000};  // one HTTP exchange
    std::chrono::milliseconds connect_timeout{5'000};
    std::chrono::milliseconds call_deadline{30'000};  // one Send(), all retries included
    int max_attempts = 8;
    std::chrono::milliseconds backoff_base{200};
    std::chrono::milliseconds backoff_cap{10'000};
    double qps = 5;  // <= 0: unlimited
    int burst = 10;
    std::chrono::seconds token_reread_interval{60};
    std::size_t max_response_bytes = 64u << 20;
    std::string user_agent = "faultline";
    std::uint64_t jitter_seed = 0;  // 0: random
    // How the client waits (rate limit, backoff, Retry-After). Default: a real
    // sleep. Tests pass one that advances a FakeClock.
    std::function<void(std::chrono::nanoseconds)> sleep;
    // Give a 429 back to the caller instead of retrying it here. The
    // Eviction API answers 429 when a PodDisruptionBudget forbids the
    // eviction now: the drain retries that pod later, on its own schedule,
    // rather than holding the daemon's one thread in this call.
    bool return_too_many_requests = false;
  };

  // Errors: kInvalidArgument (no server, or not https/http).
  static Result<std::unique_ptr<KubeHttpClient>> Create(KubeConfig config, Options options,
                                                        const Clock& clock,
                                                        MetricsRegistry& metrics);
  ~KubeHttpClient();
  KubeHttpClient(const KubeHttpClient&) = delete;
  KubeHttpClient& operator=(const KubeHttpClient&) = delete;

  Result<KubeResponse> Send(const KubeRequest& request);

  // One long-lived streaming request (a watch). Rate-limited like Send but
  // never retried (the caller resumes from what it has seen) and bounded by
  // `timeout` instead of the call deadline. The body of a 200 goes to
  // `on_data` as it arrives (return false to end the request); any other
  // status comes back with its body. `stop`, checked about once a second
  // even while the stream is idle, ends it early. A server that accepts the
  // request and sends no response headers within request_timeout (a hung
  // apiserver or load balancer) ends it too, with kUnavailable, checked at
  // the same pace. Errors as Send.
  Result<KubeResponse> Stream(const KubeRequest& request, std::chrono::milliseconds timeout,
                              const std::function<bool(std::string_view)>& on_data,
                              const std::atomic<bool>* stop);

  const KubeConfig& config() const { return config_; }
  KubeTokenSource& tokens() { return tokens_; }

 private:
  KubeHttpClient(KubeConfig config, Options options, const Clock& clock, MetricsRegistry& metrics);

  // One exchange. A transport failure is a Status; `retryable` says whether
  // it is worth another attempt (TLS verification failures are not).
  struct StreamSink {
    std::chrono::milliseconds timeout;
    const std::function<bool(std::string_view)>* on_data;
    const std::atomic<bool>* stop;
  };
  Result<KubeResponse> Perform(const KubeRequest& request, const std::string& token,
                               std::string* retry_after, bool* retryable,
                               const StreamSink* stream = nullptr);
  void Sleep(std::chrono::nanoseconds d);

  const KubeConfig config_;
  const Options options_;
  const Clock& clock_;
  KubeMetrics metrics_;
  KubeTokenSource tokens_;
  TokenBucket limiter_;
  Backoff backoff_;
  const LibCurl* curl_lib_ = nullptr;  // base/libcurl.h: loaded by Create
  void* curl_ = nullptr;               // CURL*, kept opaque so this header needs no curl.h
};

// Maps a non-2xx response to the NodeApi error vocabulary:
// 400/422 kInvalidArgument, 401 kUnauthenticated, 403 kPermissionDenied,
// 404 kNotFound, 409 kAborted, 429/5xx kUnavailable, else kInternal. The
// message carries `what`, the status and the server's Status.message.
Status StatusFromResponse(const KubeResponse& response, std::string_view what);

}  // namespace faultline
