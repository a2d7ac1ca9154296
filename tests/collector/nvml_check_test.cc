// SPDX-License-Identifier: Apache-2.0
// The NVML checks against the fake NVML (tests/fakes/fake_nvml.cc), loaded
// through NvmlLibrary's dlopen like the real libnvidia-ml.so.1.
#include "collector/checks/nvml_check.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"
#include "tests/collector/fake_nvml_state.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// An HGX node: `n` GPUs, 18 NVLinks each, all healthy.
json Healthy(int n) {
  json devices = json::array();
  for (int i = 0; i < n; ++i) {
    devices.push_back({{"pci", FakeNvml::Address(i)},
                       {"nvlink", json(std::vector<int>(18, 1))},
                       {"ecc_volatile_uncorrected", 0},
                       {"ecc_aggregate_uncorrected", 0},
                       {"remap", {{"pending", 0}, {"failure", 0}}},
                       {"clocks_event_reasons", 0}});
  }
  return {{"devices", devices}};
}

std::vector<std::string> Failures(NvmlCheck& check) {
  std::vector<std::string> out;
  for (const CheckFinding& f : check.Run({})) {
    // Node summaries have a test of their own.
    if (f.Field("device") == "node" && f.Field("counter") != "gpu_count") continue;
    if (f.status != CheckStatus::kOk) out.push_back(FormatCheckText("nvml", f));
  }
  return out;
}

NvmlCheck::Options Expect(int n) {
  NvmlCheck::Options o;
  o.expected_count = n;
  return o;
}

TEST_CASE("nvml: eight healthy GPUs pass every check") {
  FakeNvml fake;
  fake.Set(Healthy(8));
  NvmlCheck check(LoadFakeNvml(), Expect(8));
  std::vector<CheckFinding> f = check.Run({});
  // gpu_count, then per GPU: present, nvlink, 2 x ecc, 2 x remap, clocks;
  // then the node's summaries of gpu, nvlink, volatile ECC, remap pending, clocks.
  CHECK(f.size() == 1 + 8 * 7 + 5);
  CHECK(FormatCheckText("nvml", f.back()) ==
        "check=nvml status=ok device=node counter=clocks value=8 expected=8 msg=8 of 8 GPUs pass "
        "clocks");
  for (const CheckFinding& x : f) CHECK(x.status == CheckStatus::kOk);
  CHECK(FormatCheckText("nvml", f[0]) ==
        "check=nvml status=ok device=node counter=gpu_count value=8 expected=8 msg=8 of 8 GPUs "
        "visible to NVML");
  CHECK(FormatCheckText("nvml", f[2]) ==
        "check=nvml status=ok device=0000:18:00.0 counter=nvlink value=18 expected=18 msg=18 of "
        "18 NVLink links active");
}

TEST_CASE("nvml: a GPU removed from the node fails the count, naming it") {
  FakeNvml fake;
  fake.Set(Healthy(8));
  NvmlCheck check(LoadFakeNvml(), {});  // no expected count: the baseline is 8
  CHECK(Failures(check).empty());
  fake.Set(Healthy(7));
  CHECK(Failures(check) ==
        std::vector<std::string>{"check=nvml status=fail device=node counter=gpu_count value=7 "
                                 "expected=8 missing=0000:88:00.0 msg=7 of 8 GPUs visible to "
                                 "NVML (baseline: most seen since start)"});
}

TEST_CASE("nvml: a configured GPU that never came up is missing, address unknown") {
  // The summary of check.nvml-gpu-count reads "(missing: {missing})": the
  // value must be there for every shortfall, or users read "(missing: )".
  FakeNvml fake;
  fake.Set(Healthy(7));
  NvmlCheck check(LoadFakeNvml(), Expect(8));
  CHECK(Failures(check) ==
        std::vector<std::string>{"check=nvml status=fail device=node counter=gpu_count value=7 "
                                 "expected=8 missing=unknown msg=7 of 8 GPUs visible to NVML"});
}

TEST_CASE("nvml: inactive NVLink links, ECC, remapped rows and clock slowdowns are failures") {
  FakeNvml fake;
  json s = Healthy(2);
  s["devices"][1]["nvlink"][3] = 0;
  s["devices"][1]["nvlink"][17] = 0;
  s["devices"][1]["ecc_volatile_uncorrected"] = 2;
  s["devices"][1]["ecc_aggregate_uncorrected"] = 5;
  s["devices"][1]["remap"] = {{"uncorrectable", 3}, {"pending", 1}, {"failure", 1}};
  s["devices"][1]["clocks_event_reasons"] = 0x48 | 0x1;  // HW slowdown, HW thermal, idle
  fake.Set(s);
  NvmlCheck check(LoadFakeNvml(), Expect(2));
  // One string per finding, each split over lines.
  // NOLINTBEGIN(bugprone-suspicious-missing-comma)
  CHECK(Failures(check) ==
        std::vector<std::string>{
            "check=nvml status=fail device=0000:28:00.0 counter=nvlink value=16 expected=18 "
            "inactive=3,17 msg=16 of 18 NVLink links active",
            "check=nvml status=fail device=0000:28:00.0 counter=ecc_volatile_uncorrected value=2 "
            "msg=uncorrectable ECC errors since the driver loaded",
            "check=nvml status=fail device=0000:28:00.0 counter=ecc_aggregate_uncorrected value=5 "
            "expected=<=0 msg=uncorrectable ECC errors over the GPU's life",
            "check=nvml status=fail device=0000:28:00.0 counter=remap_failure value=1 "
            "uncorrectable=3 msg=row remapping failed: the GPU needs replacing",
            "check=nvml status=fail device=0000:28:00.0 counter=remap_pending value=1 msg=a row "
            "remap is pending: the GPU needs a reset",
            "check=nvml status=fail device=0000:28:00.0 counter=clocks value=0x49 "
            "reasons=hw_slowdown,hw_thermal msg=clocks slowed down: hw_slowdown,hw_thermal"});
  // NOLINTEND(bugprone-suspicious-missing-comma)
}

TEST_CASE("nvml: the node summary passes only when every GPU passes") {
  FakeNvml fake;
  json s = Healthy(2);
  s["devices"][0]["nvlink"][0] = 0;
  fake.Set(s);
  NvmlCheck check(LoadFakeNvml(), Expect(2));
  auto summary = [&](const std::string& counter) {
    for (const CheckFinding& f : check.Run({})) {
      if (f.Field("device") == "node" && f.Field("counter") == counter) {
        return FormatCheckText("nvml", f);
      }
    }
    return std::string();
  };
  CHECK(summary("nvlink") ==
        "check=nvml status=fail device=node counter=nvlink value=1 "
        "expected=2 msg=1 of 2 GPUs pass nvlink");
  fake.Set(Healthy(2));
  CHECK(summary("nvlink") ==
        "check=nvml status=ok device=node counter=nvlink value=2 "
        "expected=2 msg=2 of 2 GPUs pass nvlink");
}

TEST_CASE("nvml: a GPU without NVLink or ECC reports neither") {
  FakeNvml fake;
  fake.Set({{"devices", {{{"pci", "0000:01:00.0"}}}},
            {"errors", {{"nvmlDeviceGetTotalEccErrors", NVML_ERROR_NOT_SUPPORTED}}}});
  NvmlCheck check(LoadFakeNvml(), Expect(1));
  std::vector<CheckFinding> f = check.Run({});
  for (const CheckFinding& x : f) {
    CHECK(x.Field("counter") != "nvlink");
    CHECK(x.Field("counter").rfind("ecc", 0) != 0);
  }
}

TEST_CASE("nvml: a failing call is unknown for that counter, the rest still checked") {
  FakeNvml fake;
  json s = Healthy(1);
  s["errors"] = {{"nvmlDeviceGetRemappedRows", NVML_ERROR_UNKNOWN}};
  fake.Set(s);
  NvmlCheck check(LoadFakeNvml(), Expect(1));
  CHECK(Failures(check) ==
        std::vector<std::string>{"check=nvml status=unknown device=0000:18:00.0 "
                                 "counter=remap_pending value=Unknown_Error msg=remap_pending: "
                                 "Unknown Error"});
  SUBCASE("and a failing count is unknown for the node") {
    s["errors"] = {{"nvmlDeviceGetCount_v2", NVML_ERROR_DRIVER_NOT_LOADED}};
    fake.Set(s);
    CHECK(Failures(check) ==
          std::vector<std::string>{"check=nvml status=unknown device=node counter=gpu_count "
                                   "value=Driver_Not_Loaded msg=nvmlDeviceGetCount_v2 failed"});
  }
}

TEST_CASE("nvml: a GPU lost mid-run fails as lost, by its address") {
  FakeNvml fake;
  fake.Set(Healthy(2));
  NvmlCheck check(LoadFakeNvml(), Expect(2));
  CHECK(Failures(check).empty());
  json s = Healthy(2);
  s["devices"][0]["lost"] = true;
  fake.Set(s);
  CHECK(Failures(check) == std::vector<std::string>{"check=nvml status=fail device=0000:18:00.0 "
                                                    "counter=gpu value=lost msg=GPU 0: GPU is "
                                                    "lost"});
}

TEST_CASE("nvml: a device that disappears between the count and its calls") {
  FakeNvml fake;
  fake.Set(Healthy(3));
  NvmlCheck check(LoadFakeNvml(), Expect(3));
  CHECK(Failures(check).empty());
  // The count says 3, then GPU 2 is gone when its handle is asked for: a
  // hang in the count call gives the test time to change the file.
  json s = Healthy(3);
  s["hang_ms"] = {{"nvmlDeviceGetCount_v2", 300}};
  fake.Set(s);
  std::vector<CheckFinding> f;
  std::thread run([&] { f = check.Run({}); });
  std::this_thread::sleep_for(milliseconds(100));
  fake.Set(Healthy(2));
  run.join();
  std::vector<std::string> failures;
  for (const CheckFinding& x : f) {
    if (x.status != CheckStatus::kOk && x.Field("device") != "node") {
      failures.push_back(FormatCheckText("nvml", x));
    }
  }
  CHECK(failures == std::vector<std::string>{"check=nvml status=fail device=0000:38:00.0 "
                                             "counter=gpu value=Invalid_Argument msg=GPU 2: "
                                             "Invalid Argument"});
}

TEST_CASE("nvml: a hung call is reported hung by the check source, in time") {
  FakeNvml fake;
  json s = Healthy(1);
  s["hang_ms"] = {{"nvmlDeviceGetNvLinkState", 2000}};
  fake.Set(s);
  std::vector<CheckSource::Entry> entries;
  CheckSchedule schedule;
  schedule.interval = milliseconds(60'000);
  schedule.timeout = milliseconds(200);
  entries.push_back({std::make_unique<NvmlCheck>(LoadFakeNvml(), Expect(1)), schedule, ""});
  CheckSource::Options options;
  options.shutdown_wait = milliseconds(3000);  // let the blocked call return before the test ends
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  const auto start = std::chrono::steady_clock::now();
  std::vector<LogRecord> got = ReadChecks(**source, 1, milliseconds(1500));
  REQUIRE(got.size() == 1);
  CHECK(std::chrono::steady_clock::now() - start < milliseconds(1000));
  CHECK(got[0].text ==
        "check=nvml status=hung device=node counter=run value=200ms msg=the check "
        "did not finish within its timeout");
}

TEST_CASE("nvml: without the library the load says why") {
  Result<std::shared_ptr<NvmlLibrary>> lib = NvmlLibrary::Load("/nonexistent/libnvidia-ml.so.1");
  REQUIRE(!lib.ok());
  CHECK(lib.error().code() == StatusCode::kNotFound);
  CHECK(lib.error().message().rfind("cannot load /nonexistent/libnvidia-ml.so.1: ", 0) == 0);
  SUBCASE("and a failing nvmlInit_v2 is unavailable") {
    FakeNvml fake;
    fake.Set({{"init_error", NVML_ERROR_DRIVER_NOT_LOADED}});
    Result<std::shared_ptr<NvmlLibrary>> failed = NvmlLibrary::Load(FAKE_NVML_LIBRARY);
    REQUIRE(!failed.ok());
    CHECK(failed.error().message() == "nvmlInit_v2: Driver Not Loaded");
  }
}

}  // namespace
}  // namespace faultline
