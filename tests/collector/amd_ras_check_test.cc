// SPDX-License-Identifier: Apache-2.0
// AMD RAS error counters (sysfs ras/<block>_err_count) on fake sysfs trees.
#include "collector/checks/amd_ras_check.h"

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::vector<std::string> Failures(AmdRasCheck& check) {
  std::vector<std::string> out;
  for (const CheckFinding& f : check.Run({})) {
    if (f.status != CheckStatus::kOk) out.push_back(FormatCheckText("amd-ras", f));
  }
  return out;
}

// An MI300X-like GPU (0x1002, class 0x1200 processing accelerator) with RAS
// counters for umc (with deferred errors), gfx and xgmi_wafl, as the amdgpu
// driver writes them ("ue: %lu\nce: %lu\n", UMC adding "de: %lu\n").
void AddMi300(TempDir& sys, const std::string& address) {
  AddPciDevice(sys.path(), address, "0x1002", "0x120000");
  const std::string ras = "bus/pci/devices/" + address + "/ras/";
  sys.Write(ras + "umc_err_count", "ue: 0\nce: 0\nde: 0\n");
  sys.Write(ras + "gfx_err_count", "ue: 0\nce: 2\n");
  sys.Write(ras + "xgmi_wafl_err_count", "ue: 0\nce: 0\n");
  sys.Write(ras + "features", "feature mask: 0x3fbfffff\n");  // not a counter
}

TEST_CASE("ParseRasErrCount: the driver's format, and nothing else") {
  auto c = ParseRasErrCount("ue: 1\nce: 23\n");
  REQUIRE(c);
  CHECK(c->ue == 1);
  CHECK(c->ce == 23);
  CHECK_FALSE(c->de.has_value());
  c = ParseRasErrCount("ue: 0\nce: 0\nde: 4\n");
  REQUIRE(c);
  CHECK(c->de == 4);
  CHECK(ParseRasErrCount("ue: 1\nce: 2"));  // no final newline
  CHECK_FALSE(ParseRasErrCount(""));
  CHECK_FALSE(ParseRasErrCount("ce: 1\nue: 2\n"));
  CHECK_FALSE(ParseRasErrCount("ue: -1\nce: 0\n"));
  CHECK_FALSE(ParseRasErrCount("ue: 1x\nce: 0\n"));
  CHECK_FALSE(ParseRasErrCount("ue: 0\nce: 0\nxx: 1\n"));
  CHECK_FALSE(ParseRasErrCount("ue: 0\nce: 0\nde: 1\nmore\n"));
}

TEST_CASE("amd-ras: healthy GPUs pass, an uncorrectable error fails, correctable ones when new") {
  TempDir sys;
  AddMi300(sys, "0000:05:00.0");
  AddMi300(sys, "0000:15:00.0");
  AddPciDevice(sys.path(), "0000:3b:00.0", "0x10de", "0x030200");  // an NVIDIA GPU: not read
  AmdRasCheck check(sys.path().string());
  const std::vector<CheckFinding> first = check.Run({});
  CHECK(first.size() == 14);  // 2 GPUs x (umc ue/ce/de, gfx ue/ce, xgmi_wafl ue/ce)
  REQUIRE(!first.empty());
  CHECK(FormatCheckText("amd-ras", first[0]) ==
        "check=amd-ras status=ok device=0000:05:00.0 counter=gfx_ue value=0 expected=0 block=gfx "
        "msg=0 uncorrectable gfx errors since the driver loaded");
  // gfx's 2 correctable errors before the first run are the baseline.
  CHECK(Failures(check).empty());

  sys.Write("bus/pci/devices/0000:15:00.0/ras/umc_err_count", "ue: 1\nce: 5\nde: 1\n");
  CHECK(Failures(check) ==
        std::vector<std::string>{
            "check=amd-ras status=fail device=0000:15:00.0 counter=umc_ue value=1 expected=0 "
            "block=umc msg=1 uncorrectable umc errors since the driver loaded",
            "check=amd-ras status=fail device=0000:15:00.0 counter=umc_ce value=5 expected=0 "
            "block=umc msg=5 new correctable umc errors since the previous run",
            "check=amd-ras status=fail device=0000:15:00.0 counter=umc_de value=1 expected=0 "
            "block=umc msg=1 new deferred umc errors since the previous run"});
  // Correctable errors are news once; the uncorrectable one stays until the
  // driver reloads (a reboot).
  CHECK(Failures(check) ==
        std::vector<std::string>{
            "check=amd-ras status=fail device=0000:15:00.0 counter=umc_ue value=1 expected=0 "
            "block=umc msg=1 uncorrectable umc errors since the driver loaded"});
}

TEST_CASE("amd-ras: no ras directory, or a file the driver did not write, reports nothing") {
  TempDir sys;
  AddPciDevice(sys.path(), "0000:05:00.0", "0x1002", "0x038000");  // RAS off
  AddPciDevice(sys.path(), "0000:15:00.0", "0x1002", "0x038000");
  sys.Write("bus/pci/devices/0000:15:00.0/ras/umc_err_count", "garbage\n");
  AmdRasCheck check(sys.path().string());
  CHECK(check.Run({}).empty());
  AmdRasCheck none("/nonexistent");
  CHECK(none.Run({}).empty());
}

}  // namespace
}  // namespace faultline
