// SPDX-License-Identifier: Apache-2.0
// The active checks' parsers of text they do not control, on arbitrary
// bytes: a /metrics body (Prometheus text format, then the dcgm-exporter
// check's evaluation of what parsed, twice, so the growth paths run), an
// amdgpu RAS err_count file, and a DCGM PCI bus id.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/checks/amd_ras_check.h"
#include "collector/checks/dcgm_exporter_check.h"
#include "collector/checks/prometheus_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto samples = faultline::ParsePrometheusText(text);
  if (samples.ok()) {
    faultline::DcgmExporterCheck check({});
    (void)check.Evaluate(*samples);
    (void)check.Evaluate(*samples);
  }
  (void)faultline::ParseRasErrCount(text);
  (void)faultline::SysfsPciAddress(text);
  return 0;
}
