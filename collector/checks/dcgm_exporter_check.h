// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "collector/checks/check.h"
#include "collector/checks/http_get.h"
#include "collector/checks/prometheus_text.h"

namespace faultline {

// NVIDIA GPU health as DCGM sees it, read from the node's dcgm-exporter
// (the GPU operator deploys one per GPU node): one GET of its /metrics per
// run, parsed strictly (ParsePrometheusText). Findings per GPU, device = the
// GPU's PCI address as sysfs writes it (0000:08:00.0, from the
// `pci_bus_id` label, which dcgm-exporter 3.3.6+ writes), else gpu<index>;
// the exporter's labels follow as fields gpu, uuid, pci_bus_id, hostname:
//
//   counter=xid                value=<last Xid> expected=0   DCGM_FI_DEV_XID_ERRORS. The
//                              exporter holds the last Xid until it restarts, so a finding is
//                              made only when the value changes (and at the first scrape):
//                              fail when not 0. err_msg, when written, is the message.
//   counter=row_remap_failure  value=0|1 expected=0          DCGM_FI_DEV_ROW_REMAP_FAILURE
//   counter=ecc_dbe_volatile   value=<n> expected=0          DCGM_FI_DEV_ECC_DBE_VOL_TOTAL
//   counter=uncorrectable_remapped_rows, pcie_replay, nvlink_crc_flit, nvlink_crc_data,
//           nvlink_replay, nvlink_recovery
//                              value=<total> expected=<previous total> delta=<n>
//                              fail when the counter grew since the previous scrape
//                              (DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS,
//                              DCGM_FI_DEV_PCIE_REPLAY_COUNTER,
//                              DCGM_FI_DEV_NVLINK_{CRC_FLIT,CRC_DATA,REPLAY,RECOVERY}_ERROR_COUNT_TOTAL)
//   counter=clocks             value=0x<mask> reasons=hw_slowdown,...  fail on HW slowdown,
//                              HW thermal, HW power brake or SW thermal slowdown
//                              (DCGM_FI_DEV_CLOCKS_EVENT_REASONS, or its old name
//                              DCGM_FI_DEV_CLOCK_THROTTLE_REASONS)
//
// then device=node value=<GPUs that passed> expected=<GPUs checked> for
// row_remap_failure, ecc_dbe_volatile and clocks (what rules clear with),
// and device=node counter=scrape: status=ok value=<GPUs seen>, or
// status=error value=unreachable|timeout|too_large|http_status|malformed with
// the reason as the message. A field the exporter does not export (its
// counters CSV leaves it out) makes no finding; nor does DCGM's "blank"
// value (>= 2^63 - 16: no data for that GPU). MIG instances of one GPU
// (GPU_I_ID) repeat its device-level values; the largest is taken.
class DcgmExporterCheck final : public Check {
 public:
  struct Options {
    std::string url = "http://localhost:9400/metrics";
    HttpGetOptions http;
  };
  explicit DcgmExporterCheck(Options options) : options_(std::move(options)) {}

  // Check
  std::string_view name() const override { return "dcgm-exporter"; }
  std::vector<CheckFinding> Run(std::stop_token stop) override;

  // The findings for one parsed exposition (Run without the GET; tests).
  std::vector<CheckFinding> Evaluate(const std::vector<PrometheusSample>& samples);

 private:
  Options options_;
  std::map<std::string, double> previous_;  // "<device> <counter>" -> last value seen
};

// "00000000:08:00.0" (DCGM's 8-digit domain) or "0000:08:00.0" -> "0000:08:00.0";
// anything else -> "".
std::string SysfsPciAddress(std::string_view dcgm_bus_id);

}  // namespace faultline
