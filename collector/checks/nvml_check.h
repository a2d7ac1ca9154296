// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "collector/checks/check.h"
#include "collector/checks/nvml_library.h"

namespace faultline {

// NVIDIA GPU health through NVML (loaded by NvmlLibrary), one run looking at
// every device in turn. Findings (device = the GPU's PCI address, as sysfs
// writes it: 0000:3b:00.0):
//
//   counter=gpu_count       value=<nvmlDeviceGetCount> expected=<n>   fail when below
//   counter=gpu             value=lost|<error>                        a device that vanished
//                                                                      (GPU_IS_LOST, or its
//                                                                      handle no longer resolves)
//   counter=nvlink          value=<active> expected=<links> inactive=<n,...>  fail when any
//                           link that exists is not active (GPUs without NVLink: none)
//   counter=ecc_volatile_uncorrected   value=<n>                     fail when > 0
//   counter=ecc_aggregate_uncorrected  value=<n> expected=<=max       fail when > max
//   counter=remap_failure   value=0|1 (uncorrectable=<rows>)          fail when 1
//   counter=remap_pending   value=0|1                                 fail when 1
//   counter=retired_pages   value=<sbe+dbe> expected=<at first look> sbe=<n> dbe=<n>
//                           fail when pages were retired since the agent started
//                           (GPUs before Ampere; later ones remap rows: none)
//   counter=retired_pages_pending  value=0|1                         fail when 1
//   counter=clocks          value=0x<reasons> reasons=hw_slowdown,... fail on HW slowdown,
//                           HW thermal, HW power brake or SW thermal slowdown
//
// and, after the devices, one finding per node for each of gpu, nvlink,
// ecc_volatile_uncorrected, remap_pending, retired_pages_pending and clocks: device=node
// value=<GPUs that passed> expected=<GPUs checked>, ok only when all passed (unknown when one could
// not be read). Rules clear a fault with these only: a `clear:` lifts a rule's reason for the whole
// node.
//
// A call that returns an error (other than NOT_SUPPORTED, which means the
// GPU has no such feature) is `status=unknown value=<NVML's error text>` for
// that counter; a call that does not return is the hung run CheckSource
// reports. Expected count: as GpuInventoryCheck (configured, else the most
// seen since start).
class NvmlCheck final : public Check {
 public:
  struct Options {
    std::optional<int> expected_count;
    unsigned long long ecc_aggregate_max = 0;
  };
  NvmlCheck(std::shared_ptr<NvmlLibrary> nvml, Options options)
      : nvml_(std::move(nvml)), options_(options) {}

  // Check
  std::string_view name() const override { return "nvml"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

 private:
  void Device(unsigned int index, std::vector<CheckFinding>& out);
  // Each of Device's looks at one GPU; false when the GPU was found lost
  // (its finding appended), which ends that GPU's run.
  bool NvLinks(nvmlDevice_t dev, const std::string& device, std::vector<CheckFinding>& out);
  bool RetiredPages(nvmlDevice_t dev, const std::string& device, std::vector<CheckFinding>& out);
  // An error other than "not supported" is a finding of its own: true when
  // `code` was one (appended to `out`).
  bool Failed(nvmlReturn_t code, const std::string& device, const std::string& counter,
              std::vector<CheckFinding>& out) const;

  std::shared_ptr<NvmlLibrary> nvml_;
  Options options_;
  int baseline_ = 0;
  std::map<unsigned int, std::string> address_of_;  // index -> PCI address, as last seen
  std::map<std::string, unsigned long long> retired_baseline_;  // address -> pages at first look
};

}  // namespace faultline
