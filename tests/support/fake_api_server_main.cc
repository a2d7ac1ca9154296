// SPDX-License-Identifier: Apache-2.0
// fl-fake-apiserver: the Kubernetes API double (tests/support/fake_api_server.h)
// as its own process, for end-to-end and shell-level tests.
//
//   fl-fake-apiserver [--kubeconfig PATH] [--ca-file PATH] [--url-file PATH]
//                     [--token TOKEN] [--port N]
//                     [--node NAME[:k=v,k=v...]]...          (repeatable)
//                     [--taint NODE=KEY[=VALUE]:EFFECT]...    (repeatable; foreign taints)
//                     [--pods-per-node N]   (N Running pods of a Job on each --node, ns "ml")
//
// Prints "URL=https://127.0.0.1:PORT" on stdout once serving, writes the
// kubeconfig (server, CA data, token) and the other files atomically, and
// serves until SIGTERM or SIGINT. GET /debug/requests returns the request
// log as JSON; see fake_api_server.h for the other /debug endpoints.
#include <signal.h>
#include <stdio.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/stop_signals.h"
#include "tests/support/fake_api_server.h"

namespace {

bool WriteAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << content;
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::permissions(
      tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

int Usage(const char* why) {
  std::cerr << "fl-fake-apiserver: " << why
            << "\nusage: fl-fake-apiserver [--kubeconfig PATH] [--ca-file PATH] [--url-file PATH]"
               " [--token TOKEN] [--port N] [--node NAME[:k=v,...]]... "
               "[--taint NODE=KEY[=VALUE]:EFFECT]... [--pods-per-node N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  faultline::FakeApiServer::Options options;
  std::string kubeconfig_path, ca_path, url_path;
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> nodes;
  std::vector<std::string> taints;
  int pods_per_node = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return Usage("help");
    if (i + 1 >= argc) return Usage(("missing value for " + flag).c_str());
    const std::string value = argv[++i];
    if (flag == "--kubeconfig") {
      kubeconfig_path = value;
    } else if (flag == "--ca-file") {
      ca_path = value;
    } else if (flag == "--url-file") {
      url_path = value;
    } else if (flag == "--token") {
      options.token = value;
    } else if (flag == "--port") {
      options.port = std::atoi(value.c_str());
    } else if (flag == "--node") {
      const auto colon = value.find(':');
      std::map<std::string, std::string> labels;
      if (colon != std::string::npos) {
        std::string rest = value.substr(colon + 1);
        std::size_t start = 0;
        while (start <= rest.size()) {
          const std::size_t comma = rest.find(',', start);
          const std::string kv =
              rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          if (!kv.empty()) {
            const auto eq = kv.find('=');
            if (eq == std::string::npos) return Usage(("bad label in --node " + value).c_str());
            labels[kv.substr(0, eq)] = kv.substr(eq + 1);
          }
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      }
      nodes.emplace_back(value.substr(0, colon), labels);
    } else if (flag == "--taint") {
      taints.push_back(value);
    } else if (flag == "--pods-per-node") {
      pods_per_node = std::atoi(value.c_str());
      if (pods_per_node < 0 || pods_per_node > 1000) return Usage("--pods-per-node: 0 to 1000");
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }

  // Signals are taken by sigwait on this thread; block them before the
  // server's threads start so they inherit the mask.
  const sigset_t signals = faultline::BlockSignals({SIGTERM, SIGINT});
  signal(SIGPIPE, SIG_IGN);

  auto server = faultline::FakeApiServer::Start(options);
  if (!server) {
    std::cerr << "fl-fake-apiserver: " << server.error().ToString() << "\n";
    return 1;
  }
  for (const auto& [name, labels] : nodes) {
    (*server)->AddNode(name, labels);
    // A job's pods, as the storm's nodes run them: each is told when its node
    // is taken out (FaultlineNodeTakenOut).
    for (int p = 0; p < pods_per_node; ++p) {
      const std::string pod = name + "-job-" + std::to_string(p);
      (*server)->PutPodJson(
          {{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", pod},
             {"namespace", "ml"},
             {"uid", "uid-" + pod},
             {"ownerReferences", nlohmann::json::array({{{"apiVersion", "batch/v1"},
                                                         {"kind", "Job"},
                                                         {"name", "job-" + name},
                                                         {"uid", "uid-job-" + name},
                                                         {"controller", true}}})}}},
           {"spec", {{"nodeName", name}}},
           {"status", {{"phase", "Running"}}}});
    }
  }
  for (const std::string& spec : taints) {
    // NODE=KEY[=VALUE]:EFFECT
    const auto eq = spec.find('=');
    const auto colon = spec.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq) {
      return Usage(("bad --taint " + spec).c_str());
    }
    const std::string node = spec.substr(0, eq);
    std::string key = spec.substr(eq + 1, colon - eq - 1);
    std::string value;
    if (auto veq = key.find('='); veq != std::string::npos) {
      value = key.substr(veq + 1);
      key = key.substr(0, veq);
    }
    if (!(*server)->AddForeignTaint(node, key, value, spec.substr(colon + 1))) {
      return Usage(("--taint names an unknown node: " + node).c_str());
    }
  }
  if (!kubeconfig_path.empty() && !WriteAtomically(kubeconfig_path, (*server)->KubeconfigYaml())) {
    std::cerr << "fl-fake-apiserver: cannot write " << kubeconfig_path << "\n";
    return 1;
  }
  if (!ca_path.empty() && !WriteAtomically(ca_path, (*server)->ca_pem())) {
    std::cerr << "fl-fake-apiserver: cannot write " << ca_path << "\n";
    return 1;
  }
  if (!url_path.empty() && !WriteAtomically(url_path, (*server)->url() + "\n")) {
    std::cerr << "fl-fake-apiserver: cannot write " << url_path << "\n";
    return 1;
  }
  std::cout << "URL=" << (*server)->url() << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  (*server)->Stop();
  return 0;
}
