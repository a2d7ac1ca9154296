// SPDX-License-Identifier: Apache-2.0
// kubectl-faultline: the kubectl plugin. kubectl runs any executable named
// kubectl-NAME on PATH for `kubectl NAME ...`, so with this program on PATH
//   kubectl faultline nodes | explain NODE | untaint NODE
// runs the same code as `faultline-tainter nodes|explain|untaint`
// (tainter/daemon/node_commands.h), with the user's kubeconfig.
#include <iostream>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "base/version.h"
#include "tainter/daemon/node_commands.h"

int main(int argc, char** argv) {
  using namespace faultline;  // NOLINT(google-build-using-namespace): main only
  const std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args) {
    if (a == "--version") {
      std::cout << VersionText("kubectl-faultline", TainterVersions());
      return 0;
    }
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const int rc = RunNodeCommand("kubectl faultline", args, std::cout, std::cerr);
  curl_global_cleanup();
  return rc;
}
