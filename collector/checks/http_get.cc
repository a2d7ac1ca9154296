// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/http_get.h"

#include <memory>

#include "base/libcurl.h"

namespace faultline {
namespace {

struct Transfer {
  std::string body;
  std::size_t max_bytes = 0;
  bool too_large = false;
  std::stop_token stop;
};

std::size_t OnData(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  if (t->body.size() + bytes > t->max_bytes) {
    t->too_large = true;
    return 0;  // libcurl ends the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, bytes);
  return bytes;
}

int OnProgress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
               curl_off_t /*ulnow*/) {
  return static_cast<Transfer*>(user)->stop.stop_requested() ? 1 : 0;  // 1 aborts
}

}  // namespace

Status LoadHttpClient() {
  Result<const LibCurl*> curl = LoadLibCurl();
  return curl.ok() ? OkStatus() : curl.error();
}

Result<std::string> HttpGet(const std::string& url, const HttpGetOptions& options,
                            std::stop_token stop) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return InvalidArgumentError("'" + url + "' is not an http:// or https:// URL");
  }
  Result<const LibCurl*> loaded = LoadLibCurl();
  if (!loaded.ok()) return loaded.error();
  const LibCurl& c = **loaded;
  std::unique_ptr<CURL, void (*)(CURL*)> h(c.easy_init(), c.easy_cleanup);
  if (!h) return UnavailableError("curl_easy_init failed");
  Transfer t;
  t.max_bytes = options.max_bytes;
  t.stop = std::move(stop);
  // NOLINTBEGIN(google-runtime-int): libcurl takes long options
  const long timeout_ms = static_cast<long>(options.timeout.count());
  c.easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  c.easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt(h.get(), CURLOPT_FOLLOWLOCATION, 0L);
  c.easy_setopt(h.get(), CURLOPT_PROXY, "");     // never a proxy from the environment
  c.easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);  // worker threads: no SIGALRM
  c.easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, timeout_ms);
  c.easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  c.easy_setopt(h.get(), CURLOPT_USERAGENT, "faultline-agent");
  c.easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &OnData);
  c.easy_setopt(h.get(), CURLOPT_WRITEDATA, &t);
  c.easy_setopt(h.get(), CURLOPT_NOPROGRESS, 0L);
  c.easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, &OnProgress);
  c.easy_setopt(h.get(), CURLOPT_XFERINFODATA, &t);
  const CURLcode rc = c.easy_perform(h.get());
  if (rc == CURLE_ABORTED_BY_CALLBACK) return AbortedError("GET " + url + ": stopped");
  if (t.too_large) {
    return ResourceExhaustedError("GET " + url + ": the body is larger than " +
                                  std::to_string(options.max_bytes) + " bytes");
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return DeadlineExceededError("GET " + url + ": no answer within " +
                                 std::to_string(options.timeout.count()) + " ms");
  }
  if (rc != CURLE_OK) return UnavailableError("GET " + url + ": " + c.easy_strerror(rc));
  long status = 0;
  c.easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  // NOLINTEND(google-runtime-int)
  if (status != 200) {
    return FailedPreconditionError("GET " + url + ": HTTP " + std::to_string(status));
  }
  return std::move(t.body);
}

}  // namespace faultline
