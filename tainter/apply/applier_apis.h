// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "tainter/kube/node_api.h"

namespace faultline {

// The API capabilities the applier (tainter/apply/node_applier.h) works
// through, each chosen by the stack that assembles it: a capability the mode
// lacks is null, and the applier goes on without it.
//   nodes, events  always (read and write the nodes, record Events)
//   pods           null: no pod Events after a taint (the standalone agent's
//                  RBAC has no pods)
//   valve          null: the safety valve counts in memory, for one process
//                  (the standalone agent, a dry run)
// The pointed-to objects must outlive the applier.
struct ApplierApis {
  NodeApi& nodes;
  EventApi& events;
  PodApi* pods = nullptr;
  ValveRecordApi* valve = nullptr;

  // Every capability from one client that has them all (KubeNodeApi).
  template <typename Api>
  static ApplierApis All(Api& api) {
    return ApplierApis{api, api, &api, &api};
  }
};

}  // namespace faultline
