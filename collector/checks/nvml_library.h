// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "collector/checks/nvml_api.h"

namespace faultline {

// NVML, loaded with dlopen at run time and initialised (nvmlInit_v2).
// Tests load the fake NVML (tests/fakes/fake_nvml.cc) through this same
// path. Functions the library lacks (an old driver) are null: the checks
// that need them report `unknown` with "not in this NVML".
//
// Thread-safety: NVML's calls are thread-safe; this object is immutable
// after Load. Shared (shared_ptr) by the checks, so a call still blocked
// in a hung run keeps the library loaded; nvmlShutdown and dlclose happen
// when the last owner goes.
class NvmlLibrary {
 public:
  // `path`: "libnvidia-ml.so.1" (the dynamic linker's search, as the
  // driver installs it) or an absolute path.
  // kNotFound: dlopen failed (no NVIDIA driver on this node: the caller
  // says so once and skips). kFailedPrecondition: a required symbol is
  // missing. kUnavailable: nvmlInit_v2 failed (the message has NVML's).
  static Result<std::shared_ptr<NvmlLibrary>> Load(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // NVML's own text for a return code ("GPU is lost"), or the number.
  std::string ErrorString(nvmlReturn_t rc) const;

  // Required.
  nvmlDeviceGetCount_v2_fn GetCount = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn GetHandleByIndex = nullptr;
  nvmlDeviceGetPciInfo_v3_fn GetPciInfo = nullptr;
  // Optional (null when absent).
  nvmlDeviceGetNvLinkState_fn GetNvLinkState = nullptr;
  nvmlDeviceGetTotalEccErrors_fn GetTotalEccErrors = nullptr;
  nvmlDeviceGetRemappedRows_fn GetRemappedRows = nullptr;
  nvmlDeviceGetCurrentClocksThrottleReasons_fn GetClocksEventReasons = nullptr;
  nvmlDeviceGetRetiredPages_fn GetRetiredPages = nullptr;
  nvmlDeviceGetRetiredPagesPendingStatus_fn GetRetiredPagesPendingStatus = nullptr;
  nvmlEventSetCreate_fn EventSetCreate = nullptr;
  nvmlDeviceRegisterEvents_fn RegisterEvents = nullptr;
  nvmlEventSetWait_v2_fn EventSetWait = nullptr;
  nvmlEventSetFree_fn EventSetFree = nullptr;

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  nvmlShutdown_fn shutdown_ = nullptr;
  nvmlErrorString_fn error_string_ = nullptr;
};

}  // namespace faultline
