// SPDX-License-Identifier: Apache-2.0
// The agent's pipeline over one FakeSource and a FakeEventSink, on a
// FakeClock: the harness of the pipeline tests and the clock-jump chaos test.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "collector/agent/agent_metrics.h"
#include "collector/agent/pipeline.h"
#include "tests/agent/agent_test_util.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_event_sink.h"
#include "tests/fakes/fake_source.h"

namespace faultline {

// A pipeline over one FakeSource, with everything a test needs to steer it.
struct Harness {
  explicit Harness(Pipeline::Options options = Defaults(), std::size_t sink_capacity = 1000)
      : holder(CompileTestPack()), sink(sink_capacity), metrics(registry) {
    REQUIRE(holder.Get() != nullptr);
    auto owned = std::make_unique<FakeSource>("fake");
    source = owned.get();
    std::vector<std::unique_ptr<Source>> sources;
    sources.push_back(std::move(owned));
    pipeline = std::make_unique<Pipeline>(std::move(sources), holder, sink, clock, metrics,
                                          std::move(options));
  }

  static Pipeline::Options Defaults() {
    Pipeline::Options o;
    o.node_name = "gpu-1";
    o.boot_id = "boot-1";
    o.poll_interval = std::chrono::milliseconds(5);
    o.checkpoint_interval = std::chrono::milliseconds(10);
    return o;
  }

  std::size_t StopNow() { return pipeline->Stop(clock.MonotonicNow() + std::chrono::seconds(1)); }

  // Polls `done`, moving the clock 1 ms a poll: the pipeline's checkpoint
  // cadence and the wake-ups of a blocked read are timed on it.
  bool Wait(const std::function<bool()>& done) {
    return WaitUntil([&] {
      clock.Advance(std::chrono::milliseconds(1));
      return done();
    });
  }

  // Polls for a while, moving the clock `total` in all, and says whether
  // `happened` ever held.
  bool HappensWithin(std::chrono::milliseconds total, const std::function<bool()>& happened) {
    for (std::chrono::milliseconds t{0}; t < total; t += std::chrono::milliseconds(10)) {
      clock.Advance(std::chrono::milliseconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (happened()) return true;
    }
    return false;
  }

  RuleSetHolder holder;
  FakeClock clock;
  FakeEventSink sink;
  MetricsRegistry registry;
  AgentMetrics metrics;
  FakeSource* source = nullptr;
  std::unique_ptr<Pipeline> pipeline;
};

}  // namespace faultline
