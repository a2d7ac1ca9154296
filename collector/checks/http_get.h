// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <stop_token>
#include <string>

#include "base/status.h"

namespace faultline {

// A plain HTTP GET for checks that scrape a local endpoint (dcgm-exporter's
// /metrics), over libcurl loaded at run time: the agent that runs no such
// check never loads libcurl and its TLS stack (~3.7 MiB of RSS; the
// Kubernetes client loads it the same way: base/libcurl.h).
//
// Call LoadHttpClient() once on the main thread before any HttpGet (libcurl's
// global init is not thread-safe); HttpGet itself may run on any thread.
struct HttpGetOptions {
  std::chrono::milliseconds timeout{5000};  // the whole transfer, connect included
  std::size_t max_bytes = 16 << 20;         // a larger body is an error, not truncated
};

// kUnavailable naming the Debian package when libcurl.so.4 cannot be loaded.
Status LoadHttpClient();

// The body of a 200 answer. http:// and https:// only, no redirects
// followed, no proxy from the environment.
//   kUnavailable        cannot connect, or any transfer error (libcurl's text)
//   kDeadlineExceeded   not done within options.timeout
//   kResourceExhausted  the body is larger than options.max_bytes
//   kFailedPrecondition an HTTP status other than 200
//   kAborted            `stop` was requested
//   kInvalidArgument    a URL that is not http:// or https://
Result<std::string> HttpGet(const std::string& url, const HttpGetOptions& options,
                            std::stop_token stop);

}  // namespace faultline
