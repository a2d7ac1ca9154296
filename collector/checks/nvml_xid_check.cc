// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/nvml_xid_check.h"

#include <cstdio>
#include <vector>

namespace faultline {
namespace {

// Events taken per run at most: a storm of Xids must not keep one run
// going; the rest are taken by the next run.
constexpr int kMaxEventsPerRun = 1024;
constexpr std::size_t kMaxXidsListed = 16;

CheckFinding Unknown(const std::string& device, const std::string& value, std::string message) {
  CheckFinding f;
  f.status = CheckStatus::kUnknown;
  f.fields = {{"device", device}, {"counter", "xid_events"}, {"value", value}};
  f.message = std::move(message);
  return f;
}

}  // namespace

NvmlXidCheck::~NvmlXidCheck() {
  if (set_ != nullptr && nvml_->EventSetFree) nvml_->EventSetFree(set_);
}

std::string NvmlXidCheck::AddressOf(nvmlDevice_t device) {
  nvmlPciInfo_t pci{};
  if (nvml_->GetPciInfo(device, &pci) != NVML_SUCCESS) {
    auto known = address_of_.find(device);
    return known != address_of_.end() ? known->second : "";
  }
  char address[32];
  std::snprintf(address, sizeof(address), "%04x:%02x:%02x.0", pci.domain & 0xffffU, pci.bus & 0xffU,
                pci.device & 0x1fU);
  return address;
}

void NvmlXidCheck::Register(std::vector<CheckFinding>& out) {
  unsigned int count = 0;
  if (nvml_->GetCount(&count) != NVML_SUCCESS) return;  // the nvml check reports that
  for (unsigned int i = 0; i < count; ++i) {
    if (registered_.count(i) != 0) continue;
    nvmlDevice_t dev = nullptr;
    if (nvml_->GetHandleByIndex(i, &dev) != NVML_SUCCESS) continue;
    const std::string address = AddressOf(dev);
    if (address.empty()) continue;
    const nvmlReturn_t rc = nvml_->RegisterEvents(dev, nvmlEventTypeXidCriticalError, set_);
    if (rc == NVML_ERROR_NOT_SUPPORTED) {
      registered_.insert(i);  // no Xid events on this GPU: nothing to ask again
      continue;
    }
    if (rc != NVML_SUCCESS) {
      out.push_back(Unknown(address, nvml_->ErrorString(rc),
                            "nvmlDeviceRegisterEvents: " + nvml_->ErrorString(rc)));
      continue;  // asked again next run
    }
    registered_.insert(i);
    address_of_[dev] = address;
    total_.try_emplace(address, 0);
  }
}

std::vector<CheckFinding> NvmlXidCheck::Run(std::stop_token stop) {
  std::vector<CheckFinding> out;
  if (!nvml_->EventSetCreate || !nvml_->RegisterEvents || !nvml_->EventSetWait ||
      !nvml_->EventSetFree) {
    out.push_back(Unknown("node", "unsupported", "NVML's event API is not in this NVML"));
    return out;
  }
  if (set_ == nullptr) {
    if (nvmlReturn_t rc = nvml_->EventSetCreate(&set_); rc != NVML_SUCCESS) {
      set_ = nullptr;
      out.push_back(
          Unknown("node", nvml_->ErrorString(rc), "nvmlEventSetCreate: " + nvml_->ErrorString(rc)));
      return out;
    }
  }
  Register(out);

  std::map<std::string, std::vector<unsigned long long>> xids;  // address -> this run's
  for (int i = 0; i < kMaxEventsPerRun && !stop.stop_requested(); ++i) {
    nvmlEventData_t data{};
    const nvmlReturn_t rc = nvml_->EventSetWait(set_, &data, 0);
    if (rc == NVML_ERROR_TIMEOUT) break;  // nothing queued
    if (rc != NVML_SUCCESS) {
      out.push_back(Unknown("node", nvml_->ErrorString(rc),
                            "nvmlEventSetWait_v2: " + nvml_->ErrorString(rc)));
      break;
    }
    if ((data.eventType & nvmlEventTypeXidCriticalError) == 0) continue;
    std::string address = AddressOf(data.device);
    if (address.empty()) address = "unknown";  // the GPU went away after its Xid
    xids[address].push_back(data.eventData);
  }
  for (const auto& [address, list] : xids) total_[address] += list.size();

  for (const auto& [address, total] : total_) {
    CheckFinding f;
    f.fields = {{"device", address}, {"counter", "xid"}, {"value", std::to_string(total)}};
    auto it = xids.find(address);
    if (it == xids.end()) {
      f.message = "no Xid since the previous run";
    } else {
      f.status = CheckStatus::kFail;
      const std::vector<unsigned long long>& list = it->second;
      std::string listed;
      for (std::size_t i = 0; i < list.size() && i < kMaxXidsListed; ++i) {
        listed += (i == 0 ? "" : ",") + std::to_string(list[i]);
      }
      f.fields.emplace_back("xid", std::to_string(list.back()));
      f.fields.emplace_back("xids", listed);
      f.message = "Xid " + std::to_string(list.back()) + " (NVML event)";
      if (list.size() > 1) f.message += ", " + std::to_string(list.size()) + " Xids this run";
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace faultline
