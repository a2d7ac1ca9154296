// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "base/log.h"
#include "tainter/apply/node_applier.h"
#include "tests/fakes/sample_event.h"
#include "tests/tainter/kube/kube_test_util.h"

namespace faultline {

// A Tainter over KubeNodeApi against the API double (KubeFixture), managing
// one node gpu-1 labelled gpu=true, its nodes adopted. `prepare` runs on the
// double before the tainter is created (a boot id, a foreign taint).
struct KubeTainterFixture {
  explicit KubeTainterFixture(const std::function<void(FakeApiServer&)>& prepare = {}) {
    SetLogLevel(LogLevel::kWarning);
    f.server->AddNode("gpu-1", {{"gpu", "true"}});
    if (prepare) prepare(*f.server);
    Tainter::Options o;
    o.node_selector = "gpu=true";
    auto t = Tainter::Create(o, ApplierApis::All(f.Api()), f.metrics, f.clock);
    REQUIRE(t.ok());
    tainter = std::move(*t);
    REQUIRE(tainter->AdoptAll().ok());
  }

  // Xid 79 on gpu-1 from kmsg, a taint rule's critical match at the
  // clock's now (no expire, no boot id, no recover: the test sets them).
  FaultEvent Xid79(const std::string& cursor) const {
    FaultEvent e =
        SampleEvent("gpu-1", MakeEventId("gpu-1", "kmsg", cursor, "nvidia.xid"), f.clock.Now());
    e.origin = Origin::kAny;  // as the fixture's events always were: no origin claimed
    e.summary = "Xid 79 on 0000:3b:00: GPU has fallen off the bus";
    return e;
  }

  nlohmann::json Node() { return *f.server->GetNodeJson("gpu-1"); }

  KubeFixture f;
  std::unique_ptr<Tainter> tainter;
};

}  // namespace faultline
