// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_http.h"

#include <strings.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/libcurl.h"
#include "base/log.h"

namespace faultline {
namespace {

constexpr char kComponent[] = "kube";

struct WriteState {
  std::string* body;
  std::size_t limit;
  bool truncated = false;
  const LibCurl* lib = nullptr;  // the callbacks ask libcurl for the status
  // Streaming: a 200's body goes here instead of into `body`.
  CURL* curl = nullptr;
  const std::function<bool(std::string_view)>* on_data = nullptr;
  const std::atomic<bool>* stop = nullptr;
  // Streaming: the response headers must arrive by then (a watch's own
  // timeout is minutes long and only bounds a stream that is flowing).
  std::chrono::steady_clock::time_point answer_by{};
  bool no_answer = false;
};

std::size_t OnBody(char* data, std::size_t size, std::size_t n, void* user) {
  auto* state = static_cast<WriteState*>(user);
  const std::size_t bytes = size * n;
  if (state->on_data != nullptr) {
    long status = 0;  // NOLINT(google-runtime-int): libcurl's type
    state->lib->easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200) return (*state->on_data)(std::string_view(data, bytes)) ? bytes : 0;
  }
  if (state->body->size() + bytes > state->limit) {
    state->truncated = true;
    return 0;  // makes libcurl fail the transfer with CURLE_WRITE_ERROR
  }
  state->body->append(data, bytes);
  return bytes;
}

// Ends a stream when asked to stop; libcurl calls it about once a second
// even while no data flows.
// Also ends a stream whose server accepted it and never answered (no
// response headers by `answer_by`), as CURLOPT_TIMEOUT_MS ends a hung Send.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* state = static_cast<WriteState*>(user);
  if (state->stop != nullptr && state->stop->load()) return 1;
  if (state->answer_by != std::chrono::steady_clock::time_point{} &&
      std::chrono::steady_clock::now() >= state->answer_by) {
    long status = 0;  // NOLINT(google-runtime-int): libcurl's type
    state->lib->easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 0) {
      state->no_answer = true;
      return 1;
    }
    state->answer_by = {};  // answered: only the stream's own timeout applies now
  }
  return 0;
}

std::size_t OnHeader(char* data, std::size_t size, std::size_t n, void* user) {
  auto* retry_after = static_cast<std::string*>(user);
  const std::size_t bytes = size * n;
  std::string_view line(data, bytes);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() && strncasecmp(line.data(), kName.data(), kName.size()) == 0) {
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
      value.remove_prefix(1);
    }
    while (!value.empty() &&
           (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
      value.remove_suffix(1);
    }
    *retry_after = std::string(value);
  }
  return bytes;
}

// Retry-After in delta-seconds (what the API server sends). An HTTP date is
// not used by Kubernetes; treat it like a missing header.
std::optional<std::chrono::seconds> ParseRetryAfter(const std::string& value) {
  if (value.empty() || value.size() > 9) return std::nullopt;
  std::int64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::seconds(seconds);
}

bool IsTlsError(CURLcode code) {
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
      return true;
    default:
      return false;
  }
}

std::string Trimmed(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "...";
}

}  // namespace

Status StatusFromResponse(const KubeResponse& response, std::string_view what) {
  std::string detail;
  try {
    auto body = nlohmann::json::parse(response.body);
    if (body.is_object() && body.contains("message") && body["message"].is_string()) {
      detail = body["message"].get<std::string>();
    }
  } catch (const nlohmann::json::exception&) {
    detail = response.body;
  }
  std::string message = std::string(what) + ": HTTP " + std::to_string(response.status);
  if (!detail.empty()) message += ": " + Trimmed(detail, 300);
  switch (response.status) {
    case 400:
    case 422:
      return InvalidArgumentError(std::move(message));
    case 401:
      return UnauthenticatedError(std::move(message));
    case 403:
      return PermissionDeniedError(std::move(message));
    case 404:
      return NotFoundError(std::move(message));
    case 409:
      return AbortedError(std::move(message));
    case 429:
      return UnavailableError(std::move(message));
    default:
      break;
  }
  if (response.status >= 500) return UnavailableError(std::move(message));
  return InternalError(std::move(message));
}

Result<std::unique_ptr<KubeHttpClient>> KubeHttpClient::Create(KubeConfig config, Options options,
                                                               const Clock& clock,
                                                               MetricsRegistry& metrics) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return InvalidArgumentError("kube: server '" + config.server + "' must be an https:// URL");
  }
  Result<const LibCurl*> lib = LoadLibCurl();
  if (!lib.ok()) return UnavailableError("kube: " + lib.error().message());
  std::unique_ptr<KubeHttpClient> client(
      new KubeHttpClient(std::move(config), std::move(options), clock, metrics));
  client->curl_lib_ = *lib;
  client->curl_ = client->curl_lib_->easy_init();
  if (client->curl_ == nullptr) return InternalError("kube: curl_easy_init failed");
  if (client->config_.insecure_skip_tls_verify) {
    LogWarning(kComponent,
               "TLS verification of the API server is OFF (insecure-skip-tls-verify: true); "
               "anyone on the path can impersonate it",
               {{"server", client->config_.server}});
  }
  if (client->config_.server.rfind("http://", 0) == 0) {
    LogWarning(kComponent, "the API server URL is plain http: the token travels unencrypted",
               {{"server", client->config_.server}});
  }
  LogInfo(kComponent, "Kubernetes API client ready", {{"config", client->config_.Describe()}});
  return client;
}

KubeHttpClient::KubeHttpClient(KubeConfig config, Options options, const Clock& clock,
                               MetricsRegistry& metrics)
    : config_(std::move(config)),
      options_(std::move(options)),
      clock_(clock),
      metrics_(metrics),
      tokens_(config_.token, config_.token_file, options_.token_reread_interval, clock),
      limiter_(options_.qps, options_.burst, clock),
      backoff_(options_.backoff_base, options_.backoff_cap, options_.jitter_seed) {}

KubeHttpClient::~KubeHttpClient() {
  if (curl_ != nullptr) curl_lib_->easy_cleanup(static_cast<CURL*>(curl_));
}

void KubeHttpClient::Sleep(std::chrono::nanoseconds d) {
  if (d <= std::chrono::nanoseconds(0)) return;
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    std::this_thread::sleep_for(d);
  }
}

Result<KubeResponse> KubeHttpClient::Perform(const KubeRequest& request, const std::string& token,
                                             std::string* retry_after, bool* retryable,
                                             const StreamSink* stream) {
  const LibCurl& lib = *curl_lib_;
  CURL* curl = static_cast<CURL*>(curl_);
  // Reset keeps the connection and TLS session caches, so requests reuse
  // one connection; every option is set again below.
  lib.easy_reset(curl);
  const std::string url = config_.server + request.path;
  lib.easy_setopt(curl, CURLOPT_URL, url.c_str());
  lib.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // we are multi-threaded
  lib.easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                  static_cast<long>(stream != nullptr ? stream->timeout.count()
                                                      : options_.request_timeout.count()));
  lib.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(options_.connect_timeout.count()));
  lib.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
  lib.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  lib.easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());

  if (config_.insecure_skip_tls_verify) {
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (!config_.ca_pem.empty()) {
      curl_blob ca{const_cast<char*>(config_.ca_pem.data()), config_.ca_pem.size(), CURL_BLOB_COPY};
      lib.easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
    }
  }
  if (!config_.client_cert_pem.empty() && !config_.client_key_pem.empty()) {
    curl_blob cert{const_cast<char*>(config_.client_cert_pem.data()),
                   config_.client_cert_pem.size(), CURL_BLOB_COPY};
    curl_blob key{const_cast<char*>(config_.client_key_pem.data()), config_.client_key_pem.size(),
                  CURL_BLOB_COPY};
    lib.easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert);
    lib.easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    lib.easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key);
    lib.easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
  }

  curl_slist* headers = nullptr;
  headers = lib.slist_append(headers, "Accept: application/json");
  std::string auth;
  if (!token.empty()) {
    auth = "Authorization: Bearer " + token;
    headers = lib.slist_append(headers, auth.c_str());
  }
  std::string content_type;
  if (!request.content_type.empty()) {
    content_type = "Content-Type: " + request.content_type;
    headers = lib.slist_append(headers, content_type.c_str());
  }
  headers = lib.slist_append(headers, "Expect:");  // no 100-continue round trip
  lib.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  if (request.method == "GET") {
    lib.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    lib.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    lib.easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
    lib.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                    static_cast<curl_off_t>(request.body.size()));
  }

  KubeResponse response;
  WriteState state{&response.body, options_.max_response_bytes};
  state.lib = &lib;
  if (stream != nullptr) {
    state.curl = curl;
    state.on_data = stream->on_data;
    state.stop = stream->stop;
    // Real time, as libcurl's own timeouts (a FakeClock does not move while
    // a request hangs).
    state.answer_by = std::chrono::steady_clock::now() + options_.request_timeout;
    lib.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    lib.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    lib.easy_setopt(curl, CURLOPT_XFERINFODATA, &state);
  }
  lib.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  lib.easy_setopt(curl, CURLOPT_WRITEDATA, &state);
  lib.easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  lib.easy_setopt(curl, CURLOPT_HEADERDATA, retry_after);

  char error[CURL_ERROR_SIZE] = {0};
  lib.easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = lib.easy_perform(curl);
  lib.slist_free_all(headers);
  // The header list held the token: wipe our copy before it is freed.
  std::fill(auth.begin(), auth.end(), '\0');

  if (state.no_answer) {
    *retryable = true;
    return UnavailableError("no response headers within request_timeout (" +
                            std::to_string(options_.request_timeout.count()) + " ms)");
  }
  if (stream != nullptr && (code == CURLE_OPERATION_TIMEDOUT || code == CURLE_ABORTED_BY_CALLBACK ||
                            (code == CURLE_WRITE_ERROR && !state.truncated))) {
    // The stream ran its time, was stopped, or its reader had enough: the
    // normal ends of a watch.
    lib.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    if (response.status == 200) return response;
  }
  if (code != CURLE_OK) {
    *retryable = !IsTlsError(code) && !state.truncated;
    std::string what = error[0] != '\0' ? error : lib.easy_strerror(code);
    if (state.truncated) {
      what = "response larger than " + std::to_string(options_.max_response_bytes) + " bytes";
    }
    return UnavailableError(std::string(IsTlsError(code) ? "TLS: " : "") + what);
  }
  lib.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

Result<KubeResponse> KubeHttpClient::Send(const KubeRequest& request) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  const auto deadline = clock_.MonotonicNow() + options_.call_deadline;
  auto remaining = [&] { return duration_cast<nanoseconds>(deadline - clock_.MonotonicNow()); };
  Histogram& latency = metrics_.RequestSeconds(request.verb);
  bool reauthenticated = false;
  std::string last_failure;
  for (int attempt = 0;; ++attempt) {
    auto wait = limiter_.Reserve(remaining());
    if (!wait) {
      return UnavailableError("kube " + request.verb + " " + request.path +
                              ": rate-limit wait exceeds the call deadline");
    }
    if (wait->count() > 0) {
      metrics_.throttled.Inc();
      Sleep(*wait);
    }
    auto token = tokens_.Token();
    if (!token) return token.error();

    std::string retry_after;
    bool retryable = true;
    const auto start = clock_.MonotonicNow();
    Result<KubeResponse> result = Perform(request, *token, &retry_after, &retryable);
    latency.Observe(std::chrono::duration<double>(clock_.MonotonicNow() - start).count());
    const std::string code_label = result ? std::to_string(result->status) : "error";
    metrics_.Requests(request.verb, code_label).Inc();

    std::string reason;
    nanoseconds delay{0};
    if (!result) {
      if (!retryable) {
        LogWarning(
            kComponent, "API request failed and will not be retried",
            {{"verb", request.verb}, {"path", request.path}, {"error", result.error().message()}});
        return result.error();
      }
      reason = "connection";
      last_failure = result.error().message();
      delay = backoff_.Delay(attempt);
    } else if (result->status == 429 && !options_.return_too_many_requests) {
      // (A 429 the caller asked for goes back to it, by the last branch.)
      reason = "429";
      last_failure = "HTTP 429";
      auto seconds = ParseRetryAfter(retry_after);
      delay = seconds ? duration_cast<nanoseconds>(*seconds) : nanoseconds(backoff_.Delay(attempt));
    } else if (result->status >= 500) {
      reason = "5xx";
      last_failure = "HTTP " + std::to_string(result->status);
      delay = backoff_.Delay(attempt);
    } else if (result->status == 401 && tokens_.has_file() && !reauthenticated) {
      // The token may have rotated since we last read it: read it now and
      // try once more before telling the caller.
      reauthenticated = true;
      reason = "unauthorized";
      auto fresh = tokens_.Token(/*force_reread=*/true);
      if (!fresh) return fresh.error();
    } else {
      return result;
    }

    if (attempt + 1 >= options_.max_attempts || delay >= remaining()) {
      LogWarning(kComponent, "API request failed after retries",
                 {{"verb", request.verb},
                  {"path", request.path},
                  {"attempts", attempt + 1},
                  {"last", last_failure}});
      return UnavailableError("kube " + request.verb + " " + request.path + ": " + last_failure +
                              " after " + std::to_string(attempt + 1) + " attempt(s)");
    }
    metrics_.Retries(request.verb, reason).Inc();
    LogDebug(kComponent, "retrying API request",
             {{"verb", request.verb},
              {"path", request.path},
              {"reason", reason},
              {"delay_ms", duration_cast<milliseconds>(delay).count()}});
    Sleep(delay);
  }
}

Result<KubeResponse> KubeHttpClient::Stream(const KubeRequest& request,
                                            std::chrono::milliseconds timeout,
                                            const std::function<bool(std::string_view)>& on_data,
                                            const std::atomic<bool>* stop) {
  auto wait = limiter_.Reserve(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  if (!wait) {
    return UnavailableError("kube " + request.verb + ": rate-limit wait exceeds the timeout");
  }
  if (wait->count() > 0) Sleep(*wait);
  auto token = tokens_.Token();
  if (!token) return token.error();
  std::string retry_after;
  bool retryable = true;
  const StreamSink sink{timeout, &on_data, stop};
  Result<KubeResponse> result = Perform(request, *token, &retry_after, &retryable, &sink);
  metrics_.Requests(request.verb, result ? std::to_string(result->status) : "error").Inc();
  if (result && result->status == 401 && tokens_.has_file()) {
    tokens_.Token(/*force_reread=*/true).status().IgnoreError();  // the next watch uses it
  }
  return result;
}

}  // namespace faultline
