// SPDX-License-Identifier: Apache-2.0
// /proc/driver/nvidia against the PCI bus, on fake trees.
#include "collector/checks/nvidia_proc_check.h"

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::vector<std::string> Texts(NvidiaProcCheck& check) {
  std::vector<std::string> out;
  for (const CheckFinding& f : check.Run({})) out.push_back(FormatCheckText("nvidia-driver", f));
  return out;
}

TEST_CASE("nvidia-driver: a GPU on the bus the driver did not take fails, by address") {
  TempDir sys;
  TempDir proc;
  AddPciDevice(sys.path(), "0000:18:00.0", "0x10de", "0x030200");
  AddPciDevice(sys.path(), "0000:28:00.0", "0x10de", "0x030200");
  NvidiaProcCheck check(sys.path().string(), proc.path().string());

  SUBCASE("no driver") {
    CHECK(Texts(check) == std::vector<std::string>{
                              "check=nvidia-driver status=fail device=node counter=driver "
                              "value=missing expected=loaded msg=2 NVIDIA GPUs on the PCI bus but "
                              "no " +
                              proc.path().string() + "/driver/nvidia/version"});
  }
  SUBCASE("the driver has one of two") {
    proc.Write("driver/nvidia/version",
               "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n");
    proc.Write("driver/nvidia/gpus/0000:18:00.0/information", "Model: NVIDIA H100 80GB HBM3\n");
    std::vector<std::string> t = Texts(check);
    REQUIRE(t.size() == 4);
    CHECK(t[0].rfind("check=nvidia-driver status=ok device=node counter=driver value=loaded", 0) ==
          0);
    CHECK(t[2] ==
          "check=nvidia-driver status=fail device=0000:28:00.0 counter=driver_gpu value=absent "
          "expected=present msg=on the PCI bus but not in /proc/driver/nvidia/gpus: the driver did "
          "not initialise it");
    CHECK(t[3] ==
          "check=nvidia-driver status=fail device=node counter=driver_gpu value=1 "
          "expected=2 msg=1 of 2 NVIDIA GPUs initialised by the driver");
  }
}

TEST_CASE("nvidia-driver: a node without NVIDIA GPUs reports nothing") {
  TempDir sys;
  AddPciDevice(sys.path(), "0000:05:00.0", "0x1002", "0x038000");
  NvidiaProcCheck check(sys.path().string(), "/nonexistent");
  CHECK(check.Run({}).empty());
}

}  // namespace
}  // namespace faultline
