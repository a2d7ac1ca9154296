// SPDX-License-Identifier: Apache-2.0
// libcurl, loaded at run time by its first user (a Kubernetes client,
// tainter/kube/kube_http.h; a check that scrapes a local endpoint,
// collector/checks/http_get.h) rather than linked into every binary that
// holds their code. faultline-agent links the in-process tainter for
// `--standalone` only; linking libcurl would load it and its dependencies
// (GnuTLS, p11-kit, Kerberos, LDAP, libssh2: ~3.7 MiB of RSS, their
// constructors run at start-up) on every node that publishes to Kafka and
// never talks to the API server (bench/README.md, "Agent memory").
#pragma once

#include <curl/curl.h>

#include "base/status.h"

namespace faultline {

// The libcurl functions faultline calls. Names drop the
// `curl_` prefix: curl.h defines curl_easy_setopt and curl_easy_getinfo as
// type-checking macros under GCC.
struct LibCurl {
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  void (*easy_reset)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  CURLcode (*easy_perform)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// libcurl.so.4, loaded and curl_global_init'ed once per process (the same
// library when the binary links it too); an error naming the Debian package
// to install when it cannot be loaded.
Result<const LibCurl*> LoadLibCurl();

}  // namespace faultline
