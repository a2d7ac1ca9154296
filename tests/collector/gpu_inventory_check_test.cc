// SPDX-License-Identifier: Apache-2.0
// The accelerator inventory check on fake sysfs trees.
#include "collector/checks/gpu_inventory_check.h"

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

std::string Address(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0000:%02x:00.0", 0x18 + i * 0x10);
  return buf;
}

// An HGX-like node: 8 NVIDIA 3D controllers, 4 NVSwitches (bridges, same
// vendor), a ConnectX NIC and a host bridge.
void EightGpuNode(const std::filesystem::path& root) {
  for (int i = 0; i < 8; ++i) AddPciDevice(root, Address(i), "0x10de", "0x030200");
  for (int i = 0; i < 4; ++i) {
    AddPciDevice(root, "0000:0" + std::to_string(i) + ":01.0", "0x10de", "0x068000");
  }
  AddPciDevice(root, "0000:1a:00.0", "0x15b3", "0x020700");
  AddPciDevice(root, "0000:00:00.0", "0x8086", "0x060000");
}

std::vector<std::string> Texts(GpuInventoryCheck& check) {
  std::vector<std::string> out;
  for (const CheckFinding& f : check.Run({})) out.push_back(FormatCheckText("gpu-inventory", f));
  return out;
}

TEST_CASE("gpu-inventory counts NVIDIA GPUs by vendor and class, not NVSwitches") {
  TempDir dir;
  EightGpuNode(dir.path());
  GpuInventoryCheck::Options options;
  options.sysfs_root = dir.path().string();
  AcceleratorKind nvidia = *BuiltinAcceleratorKind("nvidia");
  nvidia.expected = 8;
  options.kinds = {nvidia};
  GpuInventoryCheck check(options);

  CHECK(Texts(check) ==
        std::vector<std::string>{"check=gpu-inventory status=ok device=node counter=nvidia value=8 "
                                 "expected=8 msg=8 of 8 nvidia accelerators on the PCI bus"});

  SUBCASE("one GPU drained off the bus") {
    std::filesystem::remove_all(dir.path() / "bus/pci/devices" / Address(3));
    CHECK(Texts(check) == std::vector<std::string>{
                              "check=gpu-inventory status=fail device=node counter=nvidia value=7 "
                              "expected=8 missing=0000:48:00.0 msg=7 of 8 nvidia accelerators on "
                              "the PCI bus"});
    SUBCASE("and back") {
      AddPciDevice(dir.path(), Address(3), "0x10de", "0x030200");
      CHECK(Texts(check)[0].find("status=ok") != std::string::npos);
    }
  }
  SUBCASE("a GPU that never came up is caught when the count is configured") {
    TempDir seven;
    for (int i = 0; i < 7; ++i) AddPciDevice(seven.path(), Address(i), "0x10de", "0x030000");
    options.sysfs_root = seven.path().string();
    GpuInventoryCheck fresh(options);
    std::vector<std::string> t = Texts(fresh);
    REQUIRE(t.size() == 1);
    // No address was ever seen gone, yet the shortfall still names its
    // missing value: check.gpu-count's summary reads "(missing: {missing})".
    CHECK(t[0].find("status=fail device=node counter=nvidia value=7 expected=8 missing=unknown "
                    "msg=") == 20);
  }
}

TEST_CASE("gpu-inventory without an expected count compares with the most it has seen") {
  TempDir dir;
  EightGpuNode(dir.path());
  AddPciDevice(dir.path(), "0000:c1:00.0", "0x1002", "0x040300");  // an AMD HD-audio function
  GpuInventoryCheck::Options options;
  options.sysfs_root = dir.path().string();
  GpuInventoryCheck check(options);  // every built-in kind, nothing expected

  std::vector<std::string> t = Texts(check);
  REQUIRE(t.size() == 1);  // kinds with no devices say nothing; audio is not a GPU
  CHECK(t[0] ==
        "check=gpu-inventory status=ok device=node counter=nvidia value=8 expected=8 msg=8 of 8 "
        "nvidia accelerators on the PCI bus (baseline: most seen since start)");
  std::filesystem::remove_all(dir.path() / "bus/pci/devices" / Address(0));
  t = Texts(check);
  REQUIRE(t.size() == 1);
  CHECK(
      t[0].find("status=fail device=node counter=nvidia value=7 expected=8 missing=0000:18:00.0") !=
      std::string::npos);

  SUBCASE("a node with nothing to count reports nothing") {
    TempDir empty;
    AddPciDevice(empty.path(), "0000:00:00.0", "0x8086", "0x060000");
    options.sysfs_root = empty.path().string();
    GpuInventoryCheck none(options);
    CHECK(Texts(none).empty());
  }
}

TEST_CASE("gpu-inventory knows AMD Instinct, Intel Gaudi and AWS Neuron") {
  TempDir dir;
  AddPciDevice(dir.path(), "0000:05:00.0", "0x1002", "0x038000");  // MI250X
  AddPciDevice(dir.path(), "0000:06:00.0", "0x1002", "0x120000");  // MI300X
  AddPciDevice(dir.path(), "0000:07:00.0", "0x1da3", "0x120000");  // Gaudi 2
  AddPciDevice(dir.path(), "0000:08:00.0", "0x1d0f", "0x088000");  // Trainium
  GpuInventoryCheck::Options options;
  options.sysfs_root = dir.path().string();
  for (std::string name : {"amd", "habana", "neuron"}) {
    AcceleratorKind k = *BuiltinAcceleratorKind(name);
    k.expected = name == "amd" ? 2 : 1;
    options.kinds.push_back(k);
  }
  GpuInventoryCheck check(options);
  std::vector<std::string> t = Texts(check);
  REQUIRE(t.size() == 3);
  CHECK(t[0].find("status=ok device=node counter=amd value=2 expected=2") != std::string::npos);
  CHECK(t[1].find("status=ok device=node counter=habana value=1 expected=1") != std::string::npos);
  CHECK(t[2].find("status=ok device=node counter=neuron value=1 expected=1") != std::string::npos);
}

TEST_CASE("gpu-inventory without a PCI tree cannot tell, and says so") {
  TempDir dir;
  GpuInventoryCheck::Options options;
  options.sysfs_root = (dir.path() / "nothing").string();
  GpuInventoryCheck check(options);
  std::vector<CheckFinding> f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(f[0].status == CheckStatus::kUnknown);
  CHECK(f[0].message.find("cannot list") == 0);
}

TEST_CASE("gpu-inventory skips unreadable or malformed device files") {
  TempDir dir;
  AddPciDevice(dir.path(), "0000:18:00.0", "0x10de", "0x030200");
  AddPciDevice(dir.path(), "0000:28:00.0", "nvidia", "0x030200");
  std::filesystem::create_directories(dir.path() / "bus/pci/devices/0000:38:00.0");
  GpuInventoryCheck::Options options;
  options.sysfs_root = dir.path().string();
  GpuInventoryCheck check(options);
  std::vector<CheckFinding> f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(f[0].Field("value") == "1");
}

}  // namespace
}  // namespace faultline
