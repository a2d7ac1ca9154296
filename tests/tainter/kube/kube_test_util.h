// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/metrics.h"
#include "tainter/kube/kube_node_api.h"
#include "tests/fakes/fake_clock.h"
#include "tests/support/fake_api_server.h"

namespace faultline {

// A FakeApiServer with one KubeNodeApi talking to it over HTTPS. Waits
// (rate limit, backoff, Retry-After) advance the FakeClock instead of
// sleeping and are recorded in `sleeps`.
struct KubeFixture {
  explicit KubeFixture(KubeNodeApi::Options api_options = {}) {
    auto started = FakeApiServer::Start();
    REQUIRE_MESSAGE(started.ok(), started.status().ToString());
    server = std::move(*started);
    config.server = server->url();
    config.ca_pem = server->ca_pem();
    config.token = server->token();
    options = std::move(api_options);
    this->options.http.sleep = [this](std::chrono::nanoseconds d) {
      sleeps.push_back(d);
      clock.Advance(d);
    };
    this->options.http.jitter_seed = 42;
  }

  KubeNodeApi& Api() {
    if (!api) {
      auto made = KubeNodeApi::Create(config, options, clock, metrics);
      REQUIRE_MESSAGE(made.ok(), made.status().ToString());
      api = std::move(*made);
    }
    return *api;
  }

  std::unique_ptr<FakeApiServer> server;
  KubeConfig config;
  KubeNodeApi::Options options;
  FakeClock clock;
  MetricsRegistry metrics;
  std::vector<std::chrono::nanoseconds> sleeps;
  std::unique_ptr<KubeNodeApi> api;
};

inline nlohmann::json Taint(const std::string& key, const std::string& value,
                            const std::string& effect) {
  nlohmann::json t = {{"key", key}, {"effect", effect}};
  if (!value.empty()) t["value"] = value;
  return t;
}

inline NodeTaint OurTaint() {
  NodeTaint t;
  t.key = "faultline.dev/faulty";
  t.value = "true";
  t.effect = "NoSchedule";
  return t;
}

// Moves an informer's changes into `changes` until `done()` holds (true) or
// 10 s passed (false): a bound, not a timing assertion.
template <class Informer, class Done>
bool TakeChangesUntil(Informer& informer, std::vector<typename Informer::Change>& changes,
                      Done done) {
  for (int i = 0; i < 400; ++i) {
    for (auto& c : informer.Take()) changes.push_back(std::move(c));
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

}  // namespace faultline
