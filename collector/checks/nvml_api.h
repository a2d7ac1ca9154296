// SPDX-License-Identifier: Apache-2.0
#pragma once

// The part of NVIDIA's NVML C API that faultline calls, declared here from
// NVML's public reference (docs.nvidia.com/deploy/nvml-api) so that the
// agent has no build dependency on the CUDA toolkit or the driver: the
// library is loaded with dlopen at run time (nvml_library.h). Only what is
// used is declared; every name and value is NVML's own.

#include <cstdint>

extern "C" {

typedef int nvmlReturn_t;  // an enum in nvml.h; an int in the ABI
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

typedef struct nvmlDevice_st* nvmlDevice_t;

typedef int nvmlEnableState_t;  // NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1
inline constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

typedef int nvmlMemoryErrorType_t;  // NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, _UNCORRECTED = 1
inline constexpr nvmlMemoryErrorType_t NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
typedef int nvmlEccCounterType_t;  // NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1
inline constexpr nvmlEccCounterType_t NVML_VOLATILE_ECC = 0;
inline constexpr nvmlEccCounterType_t NVML_AGGREGATE_ECC = 1;

inline constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;

// nvmlClocksEventReasons (formerly ClocksThrottleReasons) bits.
inline constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwSlowdown = 0x8ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwPowerBrakeSlowdown = 0x80ULL;

// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it.
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
} nvmlPciInfo_t;

// Page retirement (GPUs before Ampere; Ampere and later remap rows and
// answer NVML_ERROR_NOT_SUPPORTED).
typedef int nvmlPageRetirementCause_t;
inline constexpr nvmlPageRetirementCause_t
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr nvmlPageRetirementCause_t NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

// Events: a set that devices register event types with, waited on.
typedef struct nvmlEventSet_st* nvmlEventSet_t;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x0000000000000008ULL;
typedef struct nvmlEventData_st {
  nvmlDevice_t device;             // the device where the event occurred
  unsigned long long eventType;    // nvmlEventType*
  unsigned long long eventData;    // for Xid events, the Xid
  unsigned int gpuInstanceId;      // MIG: the GPU instance, else 0xFFFFFFFF
  unsigned int computeInstanceId;  // MIG: the compute instance, else 0xFFFFFFFF
} nvmlEventData_t;

typedef nvmlReturn_t (*nvmlInit_v2_fn)();
typedef nvmlReturn_t (*nvmlShutdown_fn)();
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlDeviceGetCount_v2_fn)(unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2_fn)(unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetPciInfo_v3_fn)(nvmlDevice_t, nvmlPciInfo_t*);
typedef nvmlReturn_t (*nvmlDeviceGetNvLinkState_fn)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEccErrors_fn)(nvmlDevice_t, nvmlMemoryErrorType_t,
                                                       nvmlEccCounterType_t, unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetRemappedRows_fn)(nvmlDevice_t, unsigned int*, unsigned int*,
                                                     unsigned int*, unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetCurrentClocksThrottleReasons_fn)(nvmlDevice_t,
                                                                     unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetRetiredPages_fn)(nvmlDevice_t, nvmlPageRetirementCause_t,
                                                     unsigned int*, unsigned long long*);
typedef nvmlReturn_t (*nvmlDeviceGetRetiredPagesPendingStatus_fn)(nvmlDevice_t, nvmlEnableState_t*);
typedef nvmlReturn_t (*nvmlEventSetCreate_fn)(nvmlEventSet_t*);
typedef nvmlReturn_t (*nvmlDeviceRegisterEvents_fn)(nvmlDevice_t, unsigned long long,
                                                    nvmlEventSet_t);
typedef nvmlReturn_t (*nvmlEventSetWait_v2_fn)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
typedef nvmlReturn_t (*nvmlEventSetFree_fn)(nvmlEventSet_t);

}  // extern "C"
