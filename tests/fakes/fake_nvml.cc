// SPDX-License-Identifier: Apache-2.0
// A fake NVML (libnvidia-ml.so.1) for the NVML checks' tests (issue 27),
// loaded by the agent through the same dlopen path as the real library
// (collector/checks/nvml_library.h). It implements the part of the C API
// that nvml_api.h declares, from a JSON state file named by
// $FAKE_NVML_STATE, read again on every call so a test changes the GPUs
// under a running agent:
//
//   {"init_error": 0,                         // nvmlInit_v2's return
//    "devices": [{"pci": "0000:18:00.0",      // domain:bus:device.function
//                 "nvlink": [1, 1, 0],         // per link: 1 active, 0 inactive
//                 "ecc_volatile_uncorrected": 0, "ecc_aggregate_uncorrected": 0,
//                 "remap": {"correctable": 0, "uncorrectable": 0,
//                           "pending": 0, "failure": 0},
//                 "clocks_event_reasons": 0,
//                 "retired_pages": {"sbe": 0, "dbe": 0, "pending": 0},  // absent: NOT_SUPPORTED,
//                                                                      // as on Ampere and later
//                 "lost": false}],             // true: every call on it is GPU_IS_LOST
//    "xid_events": [{"device": 0, "xid": 79}],  // Xids in the order they happen; an event
//                                               // set sees those appended after its creation
//    "errors": {"nvmlDeviceGetRemappedRows": 999},  // a function's forced return
//    "hang_ms": {"nvmlDeviceGetNvLinkState": 3000}} // a function blocks this long
//
// Event sets behave as NVML's: events that happened before the set was
// created are not seen, each event is returned once, only for devices
// registered with the set for nvmlEventTypeXidCriticalError, and
// nvmlEventSetWait_v2 returns NVML_ERROR_TIMEOUT when none is left (after
// waiting up to its timeout).
//
// A handle is its device's index + 1; a call on a handle whose device is
// gone from the file returns NVML_ERROR_INVALID_ARGUMENT, as NVML does for a
// stale handle. A missing or unreadable state file is a node with no GPUs.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/checks/nvml_api.h"

namespace {

nlohmann::json State() {
  const char* path = std::getenv("FAKE_NVML_STATE");  // NOLINT(concurrency-mt-unsafe): read-only
  if (path == nullptr) return nlohmann::json::object();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The forced return of `fn` (hanging first if told to), or NVML_SUCCESS.
nvmlReturn_t Enter(const nlohmann::json& s, const char* fn) {
  if (auto h = s.find("hang_ms"); h != s.end() && h->is_object() && h->contains(fn)) {
    std::this_thread::sleep_for(std::chrono::milliseconds((*h)[fn].get<int>()));
  }
  if (auto e = s.find("errors"); e != s.end() && e->is_object() && e->contains(fn)) {
    return (*e)[fn].get<int>();
  }
  return NVML_SUCCESS;
}

// The device of a handle (a copy), or nullopt (stale handle, lost GPU)
// with *rc set.
std::optional<nlohmann::json> DeviceOf(const nlohmann::json& s, nvmlDevice_t handle,
                                       nvmlReturn_t* rc) {
  const auto index = reinterpret_cast<std::uintptr_t>(handle);  // NOLINT: our own encoding
  auto devices = s.find("devices");
  if (devices == s.end() || !devices->is_array() || index == 0 || index > devices->size()) {
    *rc = NVML_ERROR_INVALID_ARGUMENT;
    return std::nullopt;
  }
  const nlohmann::json& d = (*devices)[index - 1];
  if (!d.is_object()) {
    *rc = NVML_ERROR_UNKNOWN;
    return std::nullopt;
  }
  if (d.value("lost", false)) {
    *rc = NVML_ERROR_GPU_IS_LOST;
    return std::nullopt;
  }
  *rc = NVML_SUCCESS;
  return d;
}

// Runs `body`; a state file the fake cannot use is NVML_ERROR_UNKNOWN, never
// an exception through the C ABI.
template <typename Body>
nvmlReturn_t Guard(Body body) {
  try {
    return body();
  } catch (const std::exception&) {
    return NVML_ERROR_UNKNOWN;
  }
}

std::size_t XidEventCount(const nlohmann::json& s) {
  auto e = s.find("xid_events");
  return e != s.end() && e->is_array() ? e->size() : 0;
}

}  // namespace

// What nvmlEventSet_t points to in this fake.
struct nvmlEventSet_st {
  std::size_t seen = 0;                 // xid_events before this index were delivered or predate it
  std::vector<std::uintptr_t> devices;  // handles registered for Xid events
};

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlInit_v2"); rc != NVML_SUCCESS) return rc;
    return s.value("init_error", 0);
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() { return NVML_SUCCESS; }

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetCount_v2"); rc != NVML_SUCCESS) return rc;
    *count = s.contains("devices") ? static_cast<unsigned int>(s["devices"].size()) : 0U;
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(
    unsigned int index, nvmlDevice_t* device) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetHandleByIndex_v2"); rc != NVML_SUCCESS) return rc;
    const std::size_t n = s.contains("devices") ? s["devices"].size() : 0;
    if (index >= n) return NVML_ERROR_INVALID_ARGUMENT;
    *device = reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);  // NOLINT
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                                            nvmlPciInfo_t* pci) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetPciInfo_v3"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    const std::string address = d->value("pci", "0000:00:00.0");
    unsigned int domain = 0;
    unsigned int bus = 0;
    unsigned int dev = 0;
    unsigned int fn = 0;
    if (std::sscanf(address.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
      return NVML_ERROR_UNKNOWN;
    }
    *pci = nvmlPciInfo_t{};
    pci->domain = domain;
    pci->bus = bus;
    pci->device = dev;
    // NVML writes an 8-digit domain in upper case.
    std::snprintf(pci->busId, sizeof(pci->busId), "%08X:%02X:%02X.%X", domain, bus, dev, fn);
    std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04X:%02X:%02X.%X", domain, bus, dev,
                  fn);
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkState(
    nvmlDevice_t device, unsigned int link, nvmlEnableState_t* is_active) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetNvLinkState"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    if (!d->contains("nvlink")) return NVML_ERROR_NOT_SUPPORTED;
    const nlohmann::json& links = (*d)["nvlink"];
    if (link >= links.size()) return NVML_ERROR_INVALID_ARGUMENT;
    *is_active = links[link].get<int>() != 0 ? 1 : 0;
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEccErrors(
    nvmlDevice_t device, nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,
    unsigned long long* count) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetTotalEccErrors"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    if (type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
      *count = 0;
      return NVML_SUCCESS;
    }
    const char* key =
        counter == NVML_VOLATILE_ECC ? "ecc_volatile_uncorrected" : "ecc_aggregate_uncorrected";
    *count = d->value(key, 0ULL);
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRemappedRows(
    nvmlDevice_t device, unsigned int* corr, unsigned int* unc, unsigned int* pending,
    unsigned int* failure) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetRemappedRows"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    const nlohmann::json remap = d->value("remap", nlohmann::json::object());
    *corr = remap.value("correctable", 0U);
    *unc = remap.value("uncorrectable", 0U);
    *pending = remap.value("pending", 0U);
    *failure = remap.value("failure", 0U);
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
    nvmlDevice_t device, unsigned long long* reasons) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetCurrentClocksThrottleReasons");
        rc != NVML_SUCCESS) {
      return rc;
    }
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    *reasons = d->value("clocks_event_reasons", 0ULL);
    return NVML_SUCCESS;
  });
}

}  // extern "C"

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPages(
    nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* count,
    unsigned long long* addresses) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetRetiredPages"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    if (!d->contains("retired_pages")) return NVML_ERROR_NOT_SUPPORTED;
    const nlohmann::json& r = (*d)["retired_pages"];
    const unsigned int n =
        r.value(cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? "dbe" : "sbe", 0U);
    // As NVML: a buffer too small for the pages is INSUFFICIENT_SIZE with
    // the count needed (a count of 0 asks for the size).
    if (*count < n) {
      *count = n;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; ++i) addresses[i] = 0x1000ULL * (i + 1);
    *count = n;
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(
    nvmlDevice_t device, nvmlEnableState_t* pending) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceGetRetiredPagesPendingStatus"); rc != NVML_SUCCESS) {
      return rc;
    }
    nvmlReturn_t rc = NVML_SUCCESS;
    std::optional<nlohmann::json> d = DeviceOf(s, device, &rc);
    if (!d) return rc;
    if (!d->contains("retired_pages")) return NVML_ERROR_NOT_SUPPORTED;
    *pending = (*d)["retired_pages"].value("pending", 0) != 0 ? NVML_FEATURE_ENABLED : 0;
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlEventSetCreate"); rc != NVML_SUCCESS) return rc;
    auto* created = new nvmlEventSet_st();  // NOLINT(cppcoreguidelines-owning-memory): C API
    created->seen = XidEventCount(s);
    *set = created;
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceRegisterEvents(
    nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlDeviceRegisterEvents"); rc != NVML_SUCCESS) return rc;
    nvmlReturn_t rc = NVML_SUCCESS;
    if (!DeviceOf(s, device, &rc)) return rc;
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if ((types & nvmlEventTypeXidCriticalError) == 0) return NVML_ERROR_NOT_SUPPORTED;
    set->devices.push_back(reinterpret_cast<std::uintptr_t>(device));  // NOLINT: our encoding
    return NVML_SUCCESS;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set,
                                                                        nvmlEventData_t* data,
                                                                        unsigned int timeout_ms) {
  return Guard([&]() -> nvmlReturn_t {
    nlohmann::json s = State();
    if (nvmlReturn_t rc = Enter(s, "nvmlEventSetWait_v2"); rc != NVML_SUCCESS) return rc;
    if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const std::size_t n = XidEventCount(s);
    while (set->seen < n) {
      const nlohmann::json& e = s["xid_events"][set->seen++];
      const auto handle = static_cast<std::uintptr_t>(e.value("device", 0)) + 1;
      bool registered = false;
      for (std::uintptr_t h : set->devices) registered = registered || h == handle;
      if (!registered) continue;
      *data = nvmlEventData_t{};
      data->device = reinterpret_cast<nvmlDevice_t>(handle);  // NOLINT: our encoding
      data->eventType = nvmlEventTypeXidCriticalError;
      data->eventData = e.value("xid", 0ULL);
      data->gpuInstanceId = 0xFFFFFFFFU;
      data->computeInstanceId = 0xFFFFFFFFU;
      return NVML_SUCCESS;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return NVML_ERROR_TIMEOUT;
  });
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  delete set;  // NOLINT(cppcoreguidelines-owning-memory): C API
  return NVML_SUCCESS;
}

}  // extern "C"
