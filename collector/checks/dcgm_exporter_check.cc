// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/dcgm_exporter_check.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace faultline {
namespace {

// DCGM fills a field it has no reading for with a "blank" sentinel:
// DCGM_INT64_BLANK = 0x7ffffffffffffff0 and the codes just above it, which
// dcgm-exporter prints as is (its README's own sample shows
// DCGM_FI_DEV_MEMORY_TEMP 9223372036854775794). A double cannot tell them
// apart from 2^63, so anything that large is no data.
constexpr double kBlank = 9.2e18;

bool IsReading(double v) { return std::isfinite(v) && v >= 0 && v < kBlank; }

// What dcgm-exporter calls each counter this check reads, and the name
// the check gives it.
enum class Kind { kLevel, kXid, kGrowth, kClocks };
struct Field {
  const char* metric;
  const char* counter;
  Kind kind;
};
constexpr Field kFields[] = {
    {"DCGM_FI_DEV_XID_ERRORS", "xid", Kind::kXid},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "row_remap_failure", Kind::kLevel},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc_dbe_volatile", Kind::kLevel},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "uncorrectable_remapped_rows", Kind::kGrowth},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "pcie_replay", Kind::kGrowth},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "nvlink_crc_flit", Kind::kGrowth},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "nvlink_crc_data", Kind::kGrowth},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "nvlink_replay", Kind::kGrowth},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "nvlink_recovery", Kind::kGrowth},
    // DCGM 3.3 renamed the field; dcgm-exporter names the metric after
    // whichever name its counters CSV uses.
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "clocks", Kind::kClocks},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "clocks", Kind::kClocks},
};
constexpr std::string_view kSummarised[] = {"row_remap_failure", "ecc_dbe_volatile", "clocks"};

// NVML's clock event reason bits (nvmlClocksEventReason*), which DCGM's field
// carries unchanged: the ones that mean the hardware is in trouble.
constexpr std::pair<std::uint64_t, const char*> kSlowdown[] = {
    {0x8, "hw_slowdown"}, {0x40, "hw_thermal"}, {0x80, "hw_power_brake"}, {0x20, "sw_thermal"}};

struct Reading {
  double value = 0;
  std::string err_msg;  // the Xid's text, from the series with the largest value
};

// One GPU of the exposition: its labels and its largest reading per counter.
struct Gpu {
  std::string index;
  std::string uuid;
  std::string pci_bus_id;
  std::string hostname;
  std::string device;
  std::map<std::string, Reading> readings;  // counter -> reading
};

std::string Integer(double v) { return std::to_string(static_cast<std::uint64_t>(v)); }

std::string Hex(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return "0x" + out;
}

CheckFinding Finding(const Gpu& gpu, CheckStatus status, const std::string& counter,
                     std::string value, std::string expected) {
  CheckFinding f;
  f.status = status;
  f.fields = {{"device", gpu.device},
              {"counter", counter},
              {"value", std::move(value)},
              {"expected", std::move(expected)}};
  return f;
}

void AddLabels(const Gpu& gpu, CheckFinding& f) {
  f.fields.emplace_back("gpu", gpu.index);
  if (!gpu.uuid.empty()) f.fields.emplace_back("uuid", gpu.uuid);
  if (!gpu.pci_bus_id.empty()) f.fields.emplace_back("pci_bus_id", gpu.pci_bus_id);
  if (!gpu.hostname.empty()) f.fields.emplace_back("hostname", gpu.hostname);
}

// GPUs in index order ("10" after "9").
std::vector<Gpu> GroupByGpu(const std::vector<PrometheusSample>& samples) {
  std::map<std::pair<long, std::string>, Gpu> gpus;
  for (const PrometheusSample& s : samples) {
    const Field* field = nullptr;
    for (const Field& f : kFields) {
      if (s.name == f.metric) field = &f;
    }
    if (field == nullptr || !IsReading(s.value)) continue;
    const std::string index = s.Label("gpu");
    if (index.empty()) continue;  // not a GPU entity (a switch, a link)
    char* end = nullptr;
    const long n = std::strtol(index.c_str(), &end, 10);
    Gpu& gpu = gpus[{*end == '\0' ? n : -1, index}];
    if (gpu.index.empty()) {
      gpu.index = index;
      gpu.uuid = s.Label("UUID");
      gpu.pci_bus_id = s.Label("pci_bus_id");
      // dcgm-exporter wrote `Hostname` until 4.x, `hostname` since.
      gpu.hostname = s.Label("Hostname");
      if (gpu.hostname.empty()) gpu.hostname = s.Label("hostname");
      gpu.device = SysfsPciAddress(gpu.pci_bus_id);
      if (gpu.device.empty()) gpu.device = "gpu" + index;
    }
    auto [it, first] = gpu.readings.try_emplace(field->counter);
    if (first || s.value > it->second.value) it->second = {s.value, s.Label("err_msg")};
  }
  std::vector<Gpu> out;
  out.reserve(gpus.size());
  for (auto& [key, gpu] : gpus) out.push_back(std::move(gpu));
  return out;
}

CheckFinding ScrapeError(std::string value, std::string message) {
  CheckFinding f;
  f.status = CheckStatus::kError;
  f.fields = {{"device", "node"}, {"counter", "scrape"}, {"value", std::move(value)}};
  f.message = std::move(message);
  return f;
}

}  // namespace

std::string SysfsPciAddress(std::string_view id) {
  // domain:bus:device.function, the domain 4 or 8 hex digits
  const std::size_t colon = id.find(':');
  if (colon != 4 && colon != 8) return "";
  if (id.size() != colon + 8) return "";
  std::string out;
  if (colon == 8) {
    if (id.substr(0, 4) != "0000") return "";
    id.remove_prefix(4);
  }
  for (std::size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    const bool ok = (i == 4 || i == 7) ? c == ':' : i == 10 ? c == '.' : hex;
    if (!ok) return "";
    out += c;
  }
  return out;
}

std::vector<CheckFinding> DcgmExporterCheck::Evaluate(
    const std::vector<PrometheusSample>& samples) {
  std::vector<CheckFinding> out;
  const std::vector<Gpu> gpus = GroupByGpu(samples);
  for (const Gpu& gpu : gpus) {
    for (const auto& [counter, reading] : gpu.readings) {
      const std::string key = gpu.device + " " + counter;
      const auto last = previous_.find(key);
      const double v = reading.value;
      const Field* field = nullptr;
      for (const Field& f : kFields) {
        if (counter == f.counter) field = &f;
      }
      CheckFinding f;
      switch (field->kind) {
        case Kind::kXid:
          if (last != previous_.end() && last->second == v) continue;  // still the last one
          f = Finding(gpu, v != 0 ? CheckStatus::kFail : CheckStatus::kOk, counter, Integer(v),
                      "0");
          f.message = v == 0 ? "no Xid" : "Xid " + Integer(v);
          if (v != 0 && !reading.err_msg.empty()) f.message += ": " + reading.err_msg;
          break;
        case Kind::kLevel:
          f = Finding(gpu, v != 0 ? CheckStatus::kFail : CheckStatus::kOk, counter, Integer(v),
                      "0");
          f.message = counter == "row_remap_failure"
                          ? (v != 0 ? "row remapping failed: the GPU needs replacing"
                                    : "row remapping has not failed")
                          : Integer(v) +
                                " uncorrectable (double-bit) ECC errors since the "
                                "driver loaded";
          break;
        case Kind::kGrowth: {
          // The first scrape is the baseline; a counter that went down (a
          // driver reload, a GPU reset) starts a new one.
          const double before = last == previous_.end() || last->second > v ? v : last->second;
          f = Finding(gpu, v > before ? CheckStatus::kFail : CheckStatus::kOk, counter, Integer(v),
                      Integer(before));
          f.fields.emplace_back("delta", Integer(v - before));
          f.message =
              v > before ? Integer(v - before) + " new since the previous scrape" : "no new errors";
          break;
        }
        case Kind::kClocks: {
          const auto mask = static_cast<std::uint64_t>(v);
          std::string names;
          for (const auto& [bit, name] : kSlowdown) {
            if ((mask & bit) != 0) names += (names.empty() ? "" : ",") + std::string(name);
          }
          f = Finding(gpu, names.empty() ? CheckStatus::kOk : CheckStatus::kFail, counter,
                      Hex(mask), "");
          f.fields.pop_back();  // no `expected`: any of the bits is a fault
          if (!names.empty()) f.fields.emplace_back("reasons", names);
          f.message = names.empty() ? "no slowdown" : "clocks slowed down: " + names;
          break;
        }
      }
      previous_[key] = v;
      AddLabels(gpu, f);
      out.push_back(std::move(f));
    }
  }
  AppendNodeSummaries(out, kSummarised, "GPUs");
  CheckFinding scrape;
  scrape.fields = {
      {"device", "node"}, {"counter", "scrape"}, {"value", std::to_string(gpus.size())}};
  scrape.message = std::to_string(gpus.size()) + " GPUs in " + options_.url;
  out.push_back(std::move(scrape));
  return out;
}

std::vector<CheckFinding> DcgmExporterCheck::Run(std::stop_token stop) {
  Result<std::string> body = HttpGet(options_.url, options_.http, stop);
  if (!body.ok()) {
    switch (body.error().code()) {
      case StatusCode::kAborted:
        return {};  // stopped as hung: CheckSource drops what a hung run returns
      case StatusCode::kDeadlineExceeded:
        return {ScrapeError("timeout", body.error().message())};
      case StatusCode::kResourceExhausted:
        return {ScrapeError("too_large", body.error().message())};
      case StatusCode::kFailedPrecondition:
        return {ScrapeError("http_status", body.error().message())};
      default:
        return {ScrapeError("unreachable", body.error().message())};
    }
  }
  Result<std::vector<PrometheusSample>> samples = ParsePrometheusText(*body);
  if (!samples.ok()) {
    return {ScrapeError("malformed", options_.url + ": " + samples.error().message())};
  }
  return Evaluate(*samples);
}

}  // namespace faultline
