// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/nvml_library.h"

#include <dlfcn.h>

namespace faultline {
namespace {

template <typename Fn>
Fn Symbol(void* handle, const char* name) {
  // dlsym returns an object pointer; POSIX guarantees it converts to a
  // function pointer for functions.
  return reinterpret_cast<Fn>(
      dlsym(handle, name));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace

Result<std::shared_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return NotFoundError("cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = handle;
  auto init = Symbol<nvmlInit_v2_fn>(handle, "nvmlInit_v2");
  lib->shutdown_ = Symbol<nvmlShutdown_fn>(handle, "nvmlShutdown");
  lib->error_string_ = Symbol<nvmlErrorString_fn>(handle, "nvmlErrorString");
  lib->GetCount = Symbol<nvmlDeviceGetCount_v2_fn>(handle, "nvmlDeviceGetCount_v2");
  lib->GetHandleByIndex =
      Symbol<nvmlDeviceGetHandleByIndex_v2_fn>(handle, "nvmlDeviceGetHandleByIndex_v2");
  lib->GetPciInfo = Symbol<nvmlDeviceGetPciInfo_v3_fn>(handle, "nvmlDeviceGetPciInfo_v3");
  lib->GetNvLinkState = Symbol<nvmlDeviceGetNvLinkState_fn>(handle, "nvmlDeviceGetNvLinkState");
  lib->GetTotalEccErrors =
      Symbol<nvmlDeviceGetTotalEccErrors_fn>(handle, "nvmlDeviceGetTotalEccErrors");
  lib->GetRemappedRows = Symbol<nvmlDeviceGetRemappedRows_fn>(handle, "nvmlDeviceGetRemappedRows");
  lib->GetClocksEventReasons = Symbol<nvmlDeviceGetCurrentClocksThrottleReasons_fn>(
      handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  lib->GetRetiredPages = Symbol<nvmlDeviceGetRetiredPages_fn>(handle, "nvmlDeviceGetRetiredPages");
  lib->GetRetiredPagesPendingStatus = Symbol<nvmlDeviceGetRetiredPagesPendingStatus_fn>(
      handle, "nvmlDeviceGetRetiredPagesPendingStatus");
  lib->EventSetCreate = Symbol<nvmlEventSetCreate_fn>(handle, "nvmlEventSetCreate");
  lib->RegisterEvents = Symbol<nvmlDeviceRegisterEvents_fn>(handle, "nvmlDeviceRegisterEvents");
  lib->EventSetWait = Symbol<nvmlEventSetWait_v2_fn>(handle, "nvmlEventSetWait_v2");
  lib->EventSetFree = Symbol<nvmlEventSetFree_fn>(handle, "nvmlEventSetFree");
  if (!init || !lib->shutdown_ || !lib->GetCount || !lib->GetHandleByIndex || !lib->GetPciInfo) {
    lib->shutdown_ = nullptr;  // never initialised
    return FailedPreconditionError(path +
                                   " lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2, "
                                   "nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetPciInfo_v3");
  }
  if (nvmlReturn_t rc = init(); rc != NVML_SUCCESS) {
    lib->shutdown_ = nullptr;
    return UnavailableError("nvmlInit_v2: " + lib->ErrorString(rc));
  }
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (shutdown_) shutdown_();
  if (handle_) dlclose(handle_);
}

std::string NvmlLibrary::ErrorString(nvmlReturn_t rc) const {
  if (error_string_) {
    if (const char* s = error_string_(rc)) return s;
  }
  return "NVML error " + std::to_string(rc);
}

}  // namespace faultline
