// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "collector/checks/check.h"
#include "collector/checks/nvml_library.h"

namespace faultline {

// Xid errors through NVML's event API, so that they are seen where the
// kernel log is not readable (a pod without /dev/kmsg, a journal that drops
// kernel lines). The first run creates an event set (nvmlEventSetCreate)
// and registers every GPU for nvmlEventTypeXidCriticalError
// (nvmlDeviceRegisterEvents; GPUs that appear later are registered when
// first seen); every run then takes what NVML queued since, without
// blocking (nvmlEventSetWait_v2 with a 0 ms timeout, until
// NVML_ERROR_TIMEOUT). Xids from before the first run are not seen: NVML
// only queues events for a registered set.
//
// Findings, one per registered GPU per run (device = its PCI address):
//   counter=xid value=<Xid events on this GPU since start> xid=<the last>
//   xids=<this run's, comma-separated, at most 16>   fail when this run took one
// so every new Xid is a change the check source publishes, and a run with
// none is a pass that makes the next one news again. And:
//   device=<addr> counter=xid_events value=<NVML error>   unknown: registration failed
//   device=node counter=xid_events value=<error>          unknown: no event set, or
//                                                         waiting failed ("not in this
//                                                         NVML": the API is missing)
// A call that does not return is the hung run CheckSource reports.
class NvmlXidCheck final : public Check {
 public:
  explicit NvmlXidCheck(std::shared_ptr<NvmlLibrary> nvml) : nvml_(std::move(nvml)) {}
  ~NvmlXidCheck() override;
  NvmlXidCheck(const NvmlXidCheck&) = delete;
  NvmlXidCheck& operator=(const NvmlXidCheck&) = delete;

  // Check
  std::string_view name() const override { return "nvml-xid"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  // Registers GPUs not yet registered; failures go to `out`.
  void Register(std::vector<CheckFinding>& out);
  // The PCI address of `device`: NVML's answer, else the one it had when
  // registered (a GPU that fell off the bus no longer answers), else "".
  std::string AddressOf(nvmlDevice_t device);

  std::shared_ptr<NvmlLibrary> nvml_;
  nvmlEventSet_t set_ = nullptr;
  std::set<unsigned int> registered_;                // device indices
  std::map<nvmlDevice_t, std::string> address_of_;   // handle -> address at registration
  std::map<std::string, unsigned long long> total_;  // address -> Xid events since start
};

}  // namespace faultline
