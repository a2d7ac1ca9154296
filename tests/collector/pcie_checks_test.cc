// SPDX-License-Identifier: Apache-2.0
// PCIe link training and AER counters on fake sysfs trees.
#include "collector/checks/pcie_checks.h"

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::vector<AcceleratorKind> AllKinds() {
  std::vector<AcceleratorKind> kinds;
  for (const std::string& n : BuiltinAcceleratorKindNames()) {
    kinds.push_back(*BuiltinAcceleratorKind(n));
  }
  return kinds;
}

void Link(const TempDir& dir, const std::string& address, const std::string& width,
          const std::string& max_width, const std::string& speed, const std::string& max_speed) {
  const std::string base = "bus/pci/devices/" + address + "/";
  dir.Write(base + "current_link_width", width + "\n");
  dir.Write(base + "max_link_width", max_width + "\n");
  dir.Write(base + "current_link_speed", speed + "\n");
  dir.Write(base + "max_link_speed", max_speed + "\n");
}

std::vector<std::string> Failures(Check& check) {
  std::vector<std::string> out;
  for (const CheckFinding& f : check.Run({})) {
    if (f.status != CheckStatus::kOk) out.push_back(FormatCheckText(check.name(), f));
  }
  return out;
}

TEST_CASE("pcie-link: a GPU trained at x8 of x16 fails, an idle GPU's low speed does not") {
  TempDir dir;
  AddPciDevice(dir.path(), "0000:18:00.0", "0x10de", "0x030200");
  AddPciDevice(dir.path(), "0000:28:00.0", "0x10de", "0x030200");
  AddPciDevice(dir.path(), "0000:1a:00.0", "0x15b3", "0x020700");  // ConnectX, InfiniBand
  AddPciDevice(dir.path(), "0000:00:01.0", "0x8086", "0x060400");  // a root port: not checked
  Link(dir, "0000:18:00.0", "16", "16", "2.5 GT/s PCIe", "32.0 GT/s PCIe");  // idle: fine
  Link(dir, "0000:28:00.0", "8", "16", "32.0 GT/s PCIe", "32.0 GT/s PCIe");
  Link(dir, "0000:1a:00.0", "16", "16", "32.0 GT/s PCIe", "32.0 GT/s PCIe");
  Link(dir, "0000:00:01.0", "1", "16", "2.5 GT/s PCIe", "32.0 GT/s PCIe");
  PcieLinkCheck check(dir.path().string(), AllKinds());
  CHECK(Failures(check) ==
        std::vector<std::string>{
            "check=pcie-link status=fail device=0000:28:00.0 counter=pcie_width value=x8 "
            "expected=x16 role=nvidia msg=PCIe link trained at x8 of x16",
            "check=pcie-link status=fail device=node counter=pcie_width value=2 expected=3 msg=2 "
            "of 3 devices pass pcie_width"});

  SUBCASE("a NIC trained at a lower speed fails") {
    Link(dir, "0000:28:00.0", "16", "16", "32.0 GT/s PCIe", "32.0 GT/s PCIe");
    Link(dir, "0000:1a:00.0", "16", "16", "16.0 GT/s PCIe", "32.0 GT/s PCIe");
    CHECK(Failures(check) ==
          std::vector<std::string>{
              "check=pcie-link status=fail device=0000:1a:00.0 counter=pcie_speed "
              "value=16.0_GT/s expected=32.0_GT/s role=nic msg=PCIe link trained at 16.0 GT/s "
              "PCIe of 32.0 GT/s PCIe",
              "check=pcie-link status=fail device=node counter=pcie_speed value=0 expected=1 "
              "msg=0 of 1 devices pass pcie_speed"});
  }
  SUBCASE("a device without link files (a VF) is skipped") {
    AddPciDevice(dir.path(), "0000:1a:00.1", "0x15b3", "0x020000");
    CHECK(Failures(check).size() == 2);
  }
}

TEST_CASE("pcie-aer: fatal and non-fatal counters growing since start fail") {
  TempDir dir;
  AddPciDevice(dir.path(), "0000:18:00.0", "0x10de", "0x030200");
  auto aer = [&](int fatal, int nonfatal) {
    dir.Write("bus/pci/devices/0000:18:00.0/aer_dev_fatal",
              "Undefined 0\nDataLinkProtocol 0\nSurpriseDown " + std::to_string(fatal) +
                  "\nTOTAL_ERR_FATAL " + std::to_string(fatal) + "\n");
    dir.Write("bus/pci/devices/0000:18:00.0/aer_dev_nonfatal",
              "Undefined 0\nCompletionTimeout " + std::to_string(nonfatal) +
                  "\nTOTAL_ERR_NONFATAL " + std::to_string(nonfatal) + "\n");
  };
  aer(1, 2);  // errors from before the agent started are the baseline
  AerCheck check(dir.path().string(), AllKinds());
  CHECK(Failures(check).empty());
  aer(2, 2);
  CHECK(Failures(check) ==
        std::vector<std::string>{
            "check=pcie-aer status=fail device=0000:18:00.0 counter=aer_fatal value=2 expected=1 "
            "role=nvidia msg=1 new fatal PCIe errors since the agent started",
            "check=pcie-aer status=fail device=node counter=aer_fatal value=0 expected=1 msg=0 of "
            "1 devices pass aer_fatal"});
  aer(2, 5);
  CHECK(Failures(check).size() == 4);
}

TEST_CASE("AER files and link speeds parse as the kernel writes them") {
  CHECK(AerTotal("Undefined 0\nTOTAL_ERR_FATAL 7\n", "TOTAL_ERR_FATAL") == 7);
  CHECK(AerTotal("garbage", "TOTAL_ERR_FATAL") == -1);
  CHECK(ParseLinkSpeed("16.0 GT/s PCIe\n") == doctest::Approx(16.0));
  CHECK(ParseLinkSpeed("2.5 GT/s") == doctest::Approx(2.5));
  CHECK(ParseLinkSpeed("Unknown\n") < 0);
}

}  // namespace
}  // namespace faultline
