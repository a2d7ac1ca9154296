// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/http_get.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>

#include <curl/curl.h>

namespace faultline {
namespace {

constexpr char kLibCurl[] = "libcurl.so.4";

// The few libcurl functions HttpGet calls (names without the curl_
// prefix: curl.h defines curl_easy_setopt and curl_easy_getinfo as macros).
struct Curl {
  CURL* (*easy_init)() = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
};

template <typename Fn>
void Resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) missing += missing.empty() ? name : std::string(", ") + name;
}

Result<const Curl*> Load() {
  // RTLD_NODELETE: the library stays for the life of the process, as if linked.
  void* handle = dlopen(kLibCurl, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return UnavailableError(std::string("cannot load ") + kLibCurl +
                            " (install the libcurl4 package): " + (why ? why : "unknown error"));
  }
  static Curl curl;
  std::string missing;
  CURLcode (*global_init)(long) = nullptr;  // NOLINT(google-runtime-int): libcurl's type
  Resolve(handle, "curl_global_init", global_init, missing);
  Resolve(handle, "curl_easy_init", curl.easy_init, missing);
  Resolve(handle, "curl_easy_cleanup", curl.easy_cleanup, missing);
  Resolve(handle, "curl_easy_setopt", curl.easy_setopt, missing);
  Resolve(handle, "curl_easy_getinfo", curl.easy_getinfo, missing);
  Resolve(handle, "curl_easy_perform", curl.easy_perform, missing);
  Resolve(handle, "curl_easy_strerror", curl.easy_strerror, missing);
  if (!missing.empty()) return UnavailableError(std::string(kLibCurl) + " lacks " + missing);
  // libcurl counts global inits, so a process whose Kubernetes client also
  // initialised it (the standalone agent) is fine.
  if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return UnavailableError(std::string("curl_global_init failed: ") + curl.easy_strerror(rc));
  }
  return &curl;
}

Result<const Curl*> Loaded() {
  static std::once_flag once;
  static Result<const Curl*> loaded = UnavailableError("not loaded");
  std::call_once(once, [] { loaded = Load(); });
  return loaded;
}

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
  Result<const Curl*> curl = Loaded();
  return curl.ok() ? OkStatus() : curl.error();
}

Result<std::string> HttpGet(const std::string& url, const HttpGetOptions& options,
                            std::stop_token stop) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    return InvalidArgumentError("'" + url + "' is not an http:// or https:// URL");
  }
  Result<const Curl*> loaded = Loaded();
  if (!loaded.ok()) return loaded.error();
  const Curl& c = **loaded;
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
