// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/nvml_check.h"

#include <cstdio>
#include <set>

#include "collector/checks/check_record.h"

namespace faultline {
namespace {

CheckFinding Finding(CheckStatus status, const std::string& device, const std::string& counter,
                     const std::string& value, std::string message) {
  CheckFinding f;
  f.status = status;
  f.fields = {{"device", device}, {"counter", counter}, {"value", value}};
  f.message = std::move(message);
  return f;
}

// Counters summed up per node (see Run).
constexpr std::string_view kNodeSummaries[] = {
    "gpu",   "nvlink", "ecc_volatile_uncorrected", "remap_pending", "retired_pages_pending",
    "clocks"};

std::string Hex(unsigned long long v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", v);
  return buf;
}

}  // namespace

std::vector<CheckFinding> NvmlCheck::Run(std::stop_token stop) {
  std::vector<CheckFinding> out;
  unsigned int count = 0;
  if (nvmlReturn_t rc = nvml_->GetCount(&count); rc != NVML_SUCCESS) {
    out.push_back(Finding(CheckStatus::kUnknown, "node", "gpu_count", nvml_->ErrorString(rc),
                          "nvmlDeviceGetCount_v2 failed"));
    return out;
  }
  const int n = static_cast<int>(count);
  const int expected = options_.expected_count.value_or(std::max(baseline_, n));
  baseline_ = std::max(baseline_, n);
  if (options_.expected_count || expected > 0) {
    CheckFinding f =
        Finding(n < expected ? CheckStatus::kFail : CheckStatus::kOk, "node", "gpu_count",
                std::to_string(n),
                std::to_string(n) + " of " + std::to_string(expected) + " GPUs visible to NVML" +
                    (options_.expected_count ? "" : " (baseline: most seen since start)"));
    f.fields.emplace_back("expected", std::to_string(expected));
    // Which ones: the addresses seen before at indices now gone.
    std::string missing;
    for (const auto& [index, address] : address_of_) {
      if (index >= count) missing += (missing.empty() ? "" : ",") + address;
    }
    if (n < expected) f.fields.emplace_back("missing", MissingOrUnknown(missing));
    out.push_back(std::move(f));
  }
  const std::size_t first_device = out.size();
  for (unsigned int i = 0; i < count && !stop.stop_requested(); ++i) Device(i, out);
  // One node-level finding per counter: ok only when every GPU passed it.
  // A rule's `clear:` lifts the rule's reason on the whole node, so only
  // these may clear: one healthy GPU must not clear another's fault.
  for (std::string_view counter : kNodeSummaries) {
    int checked = 0;
    int passed = 0;
    bool unknown = false;
    for (std::size_t i = first_device; i < out.size(); ++i) {
      if (out[i].Field("counter") != counter) continue;
      ++checked;
      if (out[i].status == CheckStatus::kOk) ++passed;
      if (out[i].status == CheckStatus::kUnknown) unknown = true;
    }
    if (checked == 0) continue;
    const CheckStatus status = passed == checked ? CheckStatus::kOk
                               : unknown         ? CheckStatus::kUnknown
                                                 : CheckStatus::kFail;
    CheckFinding f = Finding(status, "node", std::string(counter), std::to_string(passed),
                             std::to_string(passed) + " of " + std::to_string(checked) +
                                 " GPUs pass " + std::string(counter));
    f.fields.emplace_back("expected", std::to_string(checked));
    out.push_back(std::move(f));
  }
  return out;
}

bool NvmlCheck::Failed(nvmlReturn_t code, const std::string& device, const std::string& counter,
                       std::vector<CheckFinding>& out) const {
  if (code == NVML_SUCCESS || code == NVML_ERROR_NOT_SUPPORTED) return false;
  const bool lost = code == NVML_ERROR_GPU_IS_LOST;
  out.push_back(Finding(lost ? CheckStatus::kFail : CheckStatus::kUnknown, device,
                        lost ? "gpu" : counter, lost ? "lost" : nvml_->ErrorString(code),
                        counter + ": " + nvml_->ErrorString(code)));
  return true;
}

bool NvmlCheck::NvLinks(nvmlDevice_t dev, const std::string& device,
                        std::vector<CheckFinding>& out) {
  if (!nvml_->GetNvLinkState) return true;
  int links = 0;
  int active = 0;
  std::string inactive;
  bool error = false;
  for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t state = 0;
    nvmlReturn_t r = nvml_->GetNvLinkState(dev, link, &state);
    // Links past the GPU's last are INVALID_ARGUMENT or NOT_SUPPORTED.
    if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (Failed(r, device, "nvlink", out)) {
      error = true;
      break;
    }
    ++links;
    if (state == NVML_FEATURE_ENABLED) {
      ++active;
    } else {
      inactive += (inactive.empty() ? "" : ",") + std::to_string(link);
    }
  }
  if (error && !out.empty() && out.back().Field("value") == "lost") return false;
  if (!error && links > 0) {
    CheckFinding f =
        Finding(active < links ? CheckStatus::kFail : CheckStatus::kOk, device, "nvlink",
                std::to_string(active),
                std::to_string(active) + " of " + std::to_string(links) + " NVLink links active");
    f.fields.emplace_back("expected", std::to_string(links));
    if (!inactive.empty()) f.fields.emplace_back("inactive", inactive);
    out.push_back(std::move(f));
  }
  return true;
}

bool NvmlCheck::RetiredPages(nvmlDevice_t dev, const std::string& device,
                             std::vector<CheckFinding>& out) {
  if (!nvml_->GetRetiredPages || !nvml_->GetRetiredPagesPendingStatus) return true;
  // Page retirement is what GPUs before Ampere do instead of row
  // remapping (later ones answer NOT_SUPPORTED: nothing reported). A count
  // of 0 asks for the number of pages; INSUFFICIENT_SIZE then is the answer.
  unsigned int sbe = 0;
  unsigned int dbe = 0;
  nvmlReturn_t r = nvml_->GetRetiredPages(
      dev, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &sbe, nullptr);
  if (r == NVML_ERROR_INSUFFICIENT_SIZE) r = NVML_SUCCESS;
  if (r == NVML_SUCCESS) {
    r = nvml_->GetRetiredPages(dev, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &dbe, nullptr);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) r = NVML_SUCCESS;
  }
  if (Failed(r, device, "retired_pages", out) && out.back().Field("value") == "lost") {
    return false;
  }
  nvmlEnableState_t pending = 0;
  nvmlReturn_t p = r == NVML_SUCCESS ? nvml_->GetRetiredPagesPendingStatus(dev, &pending) : r;
  if (r == NVML_SUCCESS && Failed(p, device, "retired_pages_pending", out) &&
      out.back().Field("value") == "lost") {
    return false;
  }
  if (r == NVML_SUCCESS) {
    // Pages retired since the agent started: a new one is news (an
    // event); the count itself is the GPU's history.
    const unsigned long long total = static_cast<unsigned long long>(sbe) + dbe;
    const unsigned long long base = retired_baseline_.try_emplace(device, total).first->second;
    CheckFinding f = Finding(
        total > base ? CheckStatus::kFail : CheckStatus::kOk, device, "retired_pages",
        std::to_string(total),
        total > base ? std::to_string(total - base) + " pages retired since the agent started"
                     : "no page retired since the agent started");
    f.fields.emplace_back("expected", std::to_string(base));
    f.fields.emplace_back("sbe", std::to_string(sbe));
    f.fields.emplace_back("dbe", std::to_string(dbe));
    out.push_back(std::move(f));
  }
  if (p == NVML_SUCCESS) {
    const bool is_pending = pending == NVML_FEATURE_ENABLED;
    out.push_back(Finding(is_pending ? CheckStatus::kFail : CheckStatus::kOk, device,
                          "retired_pages_pending", is_pending ? "1" : "0",
                          is_pending ? "a page retirement is pending: it takes effect when the "
                                       "driver reloads (a reboot)"
                                     : "no page retirement pending"));
  }
  return true;
}

void NvmlCheck::Device(unsigned int index, std::vector<CheckFinding>& out) {
  const std::string by_index = "index" + std::to_string(index);
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t rc = nvml_->GetHandleByIndex(index, &dev);
  nvmlPciInfo_t pci{};
  if (rc == NVML_SUCCESS) rc = nvml_->GetPciInfo(dev, &pci);
  if (rc != NVML_SUCCESS) {
    // Vanished between GetCount and here, or lost: known by its last address.
    auto known = address_of_.find(index);
    const std::string device = known != address_of_.end() ? known->second : by_index;
    const bool lost = rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_INVALID_ARGUMENT ||
                      rc == NVML_ERROR_NOT_FOUND;
    out.push_back(Finding(lost ? CheckStatus::kFail : CheckStatus::kUnknown, device, "gpu",
                          rc == NVML_ERROR_GPU_IS_LOST ? "lost" : nvml_->ErrorString(rc),
                          "GPU " + std::to_string(index) + ": " + nvml_->ErrorString(rc)));
    return;
  }
  char address[32];
  std::snprintf(address, sizeof(address), "%04x:%02x:%02x.0", pci.domain & 0xffffU, pci.bus & 0xffU,
                pci.device & 0x1fU);
  const std::string device = address;
  address_of_[index] = device;
  out.push_back(
      Finding(CheckStatus::kOk, device, "gpu", "present", "GPU " + std::to_string(index)));

  auto failed = [&](nvmlReturn_t code, const std::string& counter) {
    return Failed(code, device, counter, out);
  };

  if (!NvLinks(dev, device, out)) return;
  if (nvml_->GetTotalEccErrors) {
    unsigned long long volatile_ue = 0;
    nvmlReturn_t r = nvml_->GetTotalEccErrors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                              NVML_VOLATILE_ECC, &volatile_ue);
    if (failed(r, "ecc_volatile_uncorrected") && out.back().Field("value") == "lost") return;
    if (r == NVML_SUCCESS) {
      out.push_back(Finding(volatile_ue > 0 ? CheckStatus::kFail : CheckStatus::kOk, device,
                            "ecc_volatile_uncorrected", std::to_string(volatile_ue),
                            "uncorrectable ECC errors since the driver loaded"));
    }
    unsigned long long aggregate_ue = 0;
    r = nvml_->GetTotalEccErrors(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
                                 &aggregate_ue);
    if (failed(r, "ecc_aggregate_uncorrected") && out.back().Field("value") == "lost") return;
    if (r == NVML_SUCCESS) {
      CheckFinding f =
          Finding(aggregate_ue > options_.ecc_aggregate_max ? CheckStatus::kFail : CheckStatus::kOk,
                  device, "ecc_aggregate_uncorrected", std::to_string(aggregate_ue),
                  "uncorrectable ECC errors over the GPU's life");
      f.fields.emplace_back("expected", "<=" + std::to_string(options_.ecc_aggregate_max));
      out.push_back(std::move(f));
    }
  }
  if (nvml_->GetRemappedRows) {
    unsigned int corr = 0;
    unsigned int unc = 0;
    unsigned int pending = 0;
    unsigned int failure = 0;
    nvmlReturn_t r = nvml_->GetRemappedRows(dev, &corr, &unc, &pending, &failure);
    if (failed(r, "remap_pending") && out.back().Field("value") == "lost") return;
    if (r == NVML_SUCCESS) {
      CheckFinding fail = Finding(failure ? CheckStatus::kFail : CheckStatus::kOk, device,
                                  "remap_failure", failure ? "1" : "0",
                                  failure ? "row remapping failed: the GPU needs replacing"
                                          : "row remapping has not failed");
      fail.fields.emplace_back("uncorrectable", std::to_string(unc));
      out.push_back(std::move(fail));
      out.push_back(Finding(
          pending ? CheckStatus::kFail : CheckStatus::kOk, device, "remap_pending",
          pending ? "1" : "0",
          pending ? "a row remap is pending: the GPU needs a reset" : "no row remap pending"));
    }
  }
  if (!RetiredPages(dev, device, out)) return;
  if (nvml_->GetClocksEventReasons) {
    unsigned long long reasons = 0;
    nvmlReturn_t r = nvml_->GetClocksEventReasons(dev, &reasons);
    if (failed(r, "clocks") && out.back().Field("value") == "lost") return;
    if (r == NVML_SUCCESS) {
      static constexpr std::pair<unsigned long long, const char*> kBad[] = {
          {nvmlClocksEventReasonHwSlowdown, "hw_slowdown"},
          {nvmlClocksEventReasonHwThermalSlowdown, "hw_thermal"},
          {nvmlClocksEventReasonHwPowerBrakeSlowdown, "hw_power_brake"},
          {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal"}};
      std::string names;
      for (const auto& [bit, name] : kBad) {
        if (reasons & bit) names += (names.empty() ? "" : ",") + std::string(name);
      }
      CheckFinding f =
          Finding(names.empty() ? CheckStatus::kOk : CheckStatus::kFail, device, "clocks",
                  Hex(reasons), names.empty() ? "no slowdown" : "clocks slowed down: " + names);
      if (!names.empty()) f.fields.emplace_back("reasons", names);
      out.push_back(std::move(f));
    }
  }
}

}  // namespace faultline
