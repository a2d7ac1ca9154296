// SPDX-License-Identifier: Apache-2.0
// The fake NVML (tests/fakes/fake_nvml.cc) for in-process tests: its state
// file, named by $FAKE_NVML_STATE for the life of one FakeNvml, and the
// library loaded through NvmlLibrary's dlopen like the real
// libnvidia-ml.so.1 (FAKE_NVML_LIBRARY is its path, set by CMake).
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <memory>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "collector/checks/nvml_library.h"
#include "tests/support/temp_dir.h"

namespace faultline {

// The fake reads its state file on every call: a test writes one with Set
// and changes it under a running check.
class FakeNvml {
 public:
  FakeNvml() {
    path_ = dir_ / "nvml.json";
    setenv("FAKE_NVML_STATE", path_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ~FakeNvml() { unsetenv("FAKE_NVML_STATE"); }  // NOLINT(concurrency-mt-unsafe)
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;
  void Set(const nlohmann::json& state) { dir_.Write("nvml.json", state.dump()); }

  // GPU i's PCI address, as an HGX board numbers them: 0000:18:00.0,
  // 0000:28:00.0, ...
  static std::string Address(int i) {
    char pci[16];
    std::snprintf(pci, sizeof(pci), "0000:%02x:00.0", 0x18 + 0x10 * i);
    return pci;
  }

 private:
  TempDir dir_;
  std::string path_;
};

inline std::shared_ptr<NvmlLibrary> LoadFakeNvml() {
  Result<std::shared_ptr<NvmlLibrary>> lib = NvmlLibrary::Load(FAKE_NVML_LIBRARY);
  REQUIRE_MESSAGE(lib.ok(), lib.error().ToString());
  return *lib;
}

}  // namespace faultline
