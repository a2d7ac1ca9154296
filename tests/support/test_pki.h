// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "base/status.h"

namespace faultline {

// A throw-away certificate authority with a server certificate for
// 127.0.0.1/localhost and a client certificate, generated in memory with
// OpenSSL (EC P-256, valid from one hour ago for one day). Tests make a
// fresh one each run, so nothing secret is checked in and a second
// TestPki is an "unknown CA" to the first.
struct TestPki {
  std::string ca_cert_pem;
  std::string ca_key_pem;
  std::string server_cert_pem;  // SAN: IP:127.0.0.1, DNS:localhost
  std::string server_key_pem;
  std::string client_cert_pem;  // CN = client_common_name, clientAuth
  std::string client_key_pem;
};

// Errors: kInternal when OpenSSL fails (message carries its error string).
Result<TestPki> GenerateTestPki(const std::string& client_common_name = "faultline-test-client");

}  // namespace faultline
