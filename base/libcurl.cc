// SPDX-License-Identifier: Apache-2.0
#include "base/libcurl.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace faultline {
namespace {

// The SONAME of libcurl 7.16 and later, whichever TLS flavour (Debian's
// libcurl4 is the OpenSSL one).
constexpr char kLibCurl[] = "libcurl.so.4";

// `fn` = the symbol `name`; a missing one is added to `missing`.
template <typename Fn>
void Resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) missing += missing.empty() ? name : std::string(", ") + name;
}

Result<const LibCurl*> Load() {
  // RTLD_NODELETE: the handles and callbacks outlive any scope here; the
  // library stays for the life of the process, as if linked.
  void* handle = dlopen(kLibCurl, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return UnavailableError(std::string("cannot load ") + kLibCurl +
                            " (install the libcurl4 package): " + (why ? why : "unknown error"));
  }
  static LibCurl lib;
  std::string missing;
  CURLcode (*global_init)(long) = nullptr;  // NOLINT(google-runtime-int): libcurl's type
  Resolve(handle, "curl_global_init", global_init, missing);
  Resolve(handle, "curl_easy_init", lib.easy_init, missing);
  Resolve(handle, "curl_easy_cleanup", lib.easy_cleanup, missing);
  Resolve(handle, "curl_easy_reset", lib.easy_reset, missing);
  Resolve(handle, "curl_easy_setopt", lib.easy_setopt, missing);
  Resolve(handle, "curl_easy_getinfo", lib.easy_getinfo, missing);
  Resolve(handle, "curl_easy_perform", lib.easy_perform, missing);
  Resolve(handle, "curl_easy_strerror", lib.easy_strerror, missing);
  Resolve(handle, "curl_slist_append", lib.slist_append, missing);
  Resolve(handle, "curl_slist_free_all", lib.slist_free_all, missing);
  if (!missing.empty()) {
    return UnavailableError(std::string(kLibCurl) + " lacks " + missing);
  }
  // Not thread-safe, so once, before the first handle (libcurl counts
  // calls: a binary that linked libcurl and initialised it already is fine).
  if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return UnavailableError("curl_global_init failed: " + std::string(lib.easy_strerror(rc)));
  }
  return &lib;
}

}  // namespace

Result<const LibCurl*> LoadLibCurl() {
  static std::once_flag once;
  static Result<const LibCurl*> loaded = UnavailableError("not loaded");
  std::call_once(once, [] { loaded = Load(); });
  return loaded;
}

}  // namespace faultline
