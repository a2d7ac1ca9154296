// SPDX-License-Identifier: Apache-2.0
// Retired pages and Xid events through NVML's event API, against the fake
// NVML (tests/fakes/fake_nvml.cc) loaded through NvmlLibrary's dlopen.
#include "collector/checks/nvml_xid_check.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "collector/checks/check_record.h"
#include "collector/checks/nvml_check.h"
#include "tests/collector/checks_test_util.h"
#include "tests/collector/fake_nvml_state.h"

namespace faultline {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// `n` GPUs at FakeNvml::Address(0), (1), ...; before Ampere (retired
// pages) when `pages` is set.
json Gpus(int n, bool pages) {
  json devices = json::array();
  for (int i = 0; i < n; ++i) {
    json d = {{"pci", FakeNvml::Address(i)}};
    if (pages) d["retired_pages"] = {{"sbe", 0}, {"dbe", 0}, {"pending", 0}};
    devices.push_back(d);
  }
  return {{"devices", devices}};
}

// The texts of the findings for `counters`, in order.
std::vector<std::string> Texts(const std::string& check, const std::vector<CheckFinding>& f,
                               std::initializer_list<std::string_view> counters) {
  std::vector<std::string> out;
  for (const CheckFinding& x : f) {
    for (std::string_view c : counters) {
      if (x.Field("counter") == c) out.push_back(FormatCheckText(check, x));
    }
  }
  return out;
}

TEST_CASE("nvml retired pages: a new page is news, a pending retirement fails until reboot") {
  FakeNvml fake;
  json s = Gpus(2, true);
  s["devices"][0]["retired_pages"] = {{"sbe", 2}, {"dbe", 1}, {"pending", 0}};
  fake.Set(s);
  NvmlCheck check(LoadFakeNvml(), {});
  // The first look is the baseline: pages retired in earlier boots are history.
  // NOLINTBEGIN(bugprone-suspicious-missing-comma): each element is one record, split for width
  CHECK(Texts("nvml", check.Run({}), {"retired_pages", "retired_pages_pending"}) ==
        std::vector<std::string>{
            "check=nvml status=ok device=0000:18:00.0 counter=retired_pages value=3 expected=3 "
            "sbe=2 dbe=1 msg=no page retired since the agent started",
            "check=nvml status=ok device=0000:18:00.0 counter=retired_pages_pending value=0 "
            "msg=no page retirement pending",
            "check=nvml status=ok device=0000:28:00.0 counter=retired_pages value=0 expected=0 "
            "sbe=0 dbe=0 msg=no page retired since the agent started",
            "check=nvml status=ok device=0000:28:00.0 counter=retired_pages_pending value=0 "
            "msg=no page retirement pending",
            "check=nvml status=ok device=node counter=retired_pages_pending value=2 expected=2 "
            "msg=2 of 2 GPUs pass retired_pages_pending"});
  s["devices"][1]["retired_pages"] = {{"sbe", 0}, {"dbe", 1}, {"pending", 1}};
  fake.Set(s);
  CHECK(Texts("nvml", check.Run({}), {"retired_pages", "retired_pages_pending"}) ==
        std::vector<std::string>{
            "check=nvml status=ok device=0000:18:00.0 counter=retired_pages value=3 expected=3 "
            "sbe=2 dbe=1 msg=no page retired since the agent started",
            "check=nvml status=ok device=0000:18:00.0 counter=retired_pages_pending value=0 "
            "msg=no page retirement pending",
            "check=nvml status=fail device=0000:28:00.0 counter=retired_pages value=1 expected=0 "
            "sbe=0 dbe=1 msg=1 pages retired since the agent started",
            "check=nvml status=fail device=0000:28:00.0 counter=retired_pages_pending value=1 "
            "msg=a page retirement is pending: it takes effect when the driver reloads (a reboot)",
            "check=nvml status=fail device=node counter=retired_pages_pending value=1 expected=2 "
            "msg=1 of 2 GPUs pass retired_pages_pending"});
  // NOLINTEND(bugprone-suspicious-missing-comma)
}

TEST_CASE("nvml retired pages: Ampere and later (NOT_SUPPORTED) report none, an error is unknown") {
  FakeNvml fake;
  json s = Gpus(1, false);
  fake.Set(s);
  NvmlCheck check(LoadFakeNvml(), {});
  CHECK(Texts("nvml", check.Run({}), {"retired_pages", "retired_pages_pending"}).empty());
  s = Gpus(1, true);
  s["errors"] = {{"nvmlDeviceGetRetiredPagesPendingStatus", NVML_ERROR_UNKNOWN}};
  fake.Set(s);
  CHECK(Texts("nvml", check.Run({}), {"retired_pages_pending"}) ==
        std::vector<std::string>{
            "check=nvml status=unknown device=0000:18:00.0 counter=retired_pages_pending "
            "value=Unknown_Error msg=retired_pages_pending: Unknown Error",
            "check=nvml status=unknown device=node counter=retired_pages_pending value=0 "
            "expected=1 msg=0 of 1 GPUs pass retired_pages_pending"});
}

TEST_CASE("nvml-xid: Xids after the first run are reported once each, by GPU address") {
  FakeNvml fake;
  json s = Gpus(2, false);
  s["xid_events"] = {{{"device", 0}, {"xid", 13}}};  // before the agent: not seen
  fake.Set(s);
  NvmlXidCheck check(LoadFakeNvml());
  CHECK(Texts("nvml-xid", check.Run({}), {"xid"}) ==
        std::vector<std::string>{
            "check=nvml-xid status=ok device=0000:18:00.0 counter=xid value=0 msg=no Xid since "
            "the previous run",
            "check=nvml-xid status=ok device=0000:28:00.0 counter=xid value=0 msg=no Xid since "
            "the previous run"});
  s["xid_events"].push_back({{"device", 1}, {"xid", 79}});
  s["xid_events"].push_back({{"device", 1}, {"xid", 48}});
  fake.Set(s);
  CHECK(Texts("nvml-xid", check.Run({}), {"xid"}) ==
        std::vector<std::string>{
            "check=nvml-xid status=ok device=0000:18:00.0 counter=xid value=0 msg=no Xid since "
            "the previous run",
            "check=nvml-xid status=fail device=0000:28:00.0 counter=xid value=2 xid=48 "
            "xids=79,48 msg=Xid 48 (NVML event), 2 Xids this run"});
  // Taken: the next run has none, and the same Xid again is news again.
  CHECK(check.Run({})[1].status == CheckStatus::kOk);
  s["xid_events"].push_back({{"device", 1}, {"xid", 48}});
  fake.Set(s);
  CHECK(FormatCheckText("nvml-xid", check.Run({})[1]) ==
        "check=nvml-xid status=fail device=0000:28:00.0 counter=xid value=3 xid=48 xids=48 "
        "msg=Xid 48 (NVML event)");
}

TEST_CASE("nvml-xid: failing calls are unknown, registration is retried") {
  FakeNvml fake;
  json s = Gpus(1, false);
  s["errors"] = {{"nvmlDeviceRegisterEvents", NVML_ERROR_UNKNOWN}};
  fake.Set(s);
  NvmlXidCheck check(LoadFakeNvml());
  CHECK(Texts("nvml-xid", check.Run({}), {"xid", "xid_events"}) ==
        std::vector<std::string>{
            "check=nvml-xid status=unknown device=0000:18:00.0 counter=xid_events "
            "value=Unknown_Error msg=nvmlDeviceRegisterEvents: Unknown Error"});
  s.erase("errors");
  s["xid_events"] = json::array();
  fake.Set(s);
  CHECK(Texts("nvml-xid", check.Run({}), {"xid", "xid_events"}) ==
        std::vector<std::string>{"check=nvml-xid status=ok device=0000:18:00.0 counter=xid "
                                 "value=0 msg=no Xid since the previous run"});
  s["errors"] = {{"nvmlEventSetWait_v2", NVML_ERROR_UNKNOWN}};
  fake.Set(s);
  CHECK(Texts("nvml-xid", check.Run({}), {"xid_events"}) ==
        std::vector<std::string>{"check=nvml-xid status=unknown device=node counter=xid_events "
                                 "value=Unknown_Error msg=nvmlEventSetWait_v2: Unknown Error"});

  SUBCASE("and an event set that cannot be made") {
    json t = Gpus(1, false);
    t["errors"] = {{"nvmlEventSetCreate", NVML_ERROR_UNKNOWN}};
    fake.Set(t);
    NvmlXidCheck other(LoadFakeNvml());
    CHECK(Texts("nvml-xid", other.Run({}), {"xid", "xid_events"}) ==
          std::vector<std::string>{"check=nvml-xid status=unknown device=node "
                                   "counter=xid_events value=Unknown_Error "
                                   "msg=nvmlEventSetCreate: Unknown Error"});
  }
}

TEST_CASE("nvml-xid: a GPU gone after its Xid is still reported, by the address it had") {
  FakeNvml fake;
  json s = Gpus(2, false);
  s["xid_events"] = json::array();
  fake.Set(s);
  NvmlXidCheck check(LoadFakeNvml());
  (void)check.Run({});
  s["xid_events"].push_back({{"device", 1}, {"xid", 79}});
  s["devices"][1]["lost"] = true;  // fell off the bus: its PCI info no longer answers
  fake.Set(s);
  CHECK(Texts("nvml-xid", check.Run({}), {"xid"}) ==
        std::vector<std::string>{
            "check=nvml-xid status=ok device=0000:18:00.0 counter=xid value=0 msg=no Xid since "
            "the previous run",
            "check=nvml-xid status=fail device=0000:28:00.0 counter=xid value=1 xid=79 xids=79 "
            "msg=Xid 79 (NVML event)"});
}

TEST_CASE("nvml-xid: a hung wait is reported hung by the check source, in time") {
  FakeNvml fake;
  json s = Gpus(1, false);
  s["hang_ms"] = {{"nvmlEventSetWait_v2", 2000}};
  fake.Set(s);
  std::vector<CheckSource::Entry> entries;
  CheckSchedule schedule;
  schedule.interval = milliseconds(60'000);
  schedule.timeout = milliseconds(200);
  entries.push_back({std::make_unique<NvmlXidCheck>(LoadFakeNvml()), schedule, ""});
  CheckSource::Options options;
  options.shutdown_wait = milliseconds(3000);  // let the blocked call return before the test ends
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  const auto start = std::chrono::steady_clock::now();
  std::vector<LogRecord> got = ReadChecks(**source, 1, milliseconds(1500));
  REQUIRE(got.size() == 1);
  CHECK(std::chrono::steady_clock::now() - start < milliseconds(1000));
  CHECK(got[0].text ==
        "check=nvml-xid status=hung device=node counter=run value=200ms msg=the check "
        "did not finish within its timeout");
}

}  // namespace
}  // namespace faultline
