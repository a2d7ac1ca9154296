// SPDX-License-Identifier: Apache-2.0
// The check source: schedule, timeouts, concurrency, what is published.
#include "collector/checks/check_source.h"

#include <atomic>
#include <mutex>
#include <thread>

#include <doctest/doctest.h>

#include "collector/checks/check_record.h"
#include "tests/collector/checks_test_util.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

// A check that reports whatever status the test sets, and can be made to
// block (until stopped, or for a while) to play a hung check.
class ScriptedCheck final : public Check {
 public:
  explicit ScriptedCheck(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  std::vector<CheckFinding> Run(std::stop_token stop) override {
    const int now = ++active_;
    int seen = max_active_.load();
    while (now > seen && !max_active_.compare_exchange_weak(seen, now)) {
    }
    ++runs_;
    const milliseconds block = block_.load();
    const auto until = std::chrono::steady_clock::now() + block;
    while (std::chrono::steady_clock::now() < until && !(honour_stop_ && stop.stop_requested())) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    --active_;
    CheckFinding f;
    f.status = status_.load();
    f.fields = {{"device", "node"}, {"counter", "thing"}, {"value", "1"}};
    f.message = "scripted";
    return {f};
  }

  std::atomic<CheckStatus> status_{CheckStatus::kOk};
  std::atomic<milliseconds> block_{milliseconds(0)};
  bool honour_stop_ = false;
  std::atomic<int> runs_{0};
  std::atomic<int> active_{0};
  std::atomic<int> max_active_{0};

 private:
  std::string name_;
};

CheckSchedule Every(milliseconds interval, milliseconds timeout = milliseconds(5000)) {
  CheckSchedule s;
  s.interval = interval;
  s.timeout = timeout;
  return s;
}

TEST_CASE("check records carry origin check, the structured fields as text and labels") {
  CheckFinding f;
  f.status = CheckStatus::kFail;
  f.fields = {{"device", "0000:3b:00.0"}, {"counter", "nvidia"}, {"value", "7"}, {"expected", "8"}};
  f.message = "7 of 8\nnvidia accelerators";
  LogRecord r = MakeCheckRecord("gpu-inventory", f);
  CHECK(r.origin == Origin::kCheck);
  CHECK(r.source == "checks");
  CHECK(r.text ==
        "check=gpu-inventory status=fail device=0000:3b:00.0 counter=nvidia value=7 expected=8 "
        "msg=7 of 8 nvidia accelerators");
  CHECK(r.labels.at("expected") == "8");
  CHECK(r.labels.at("status") == "fail");

  SUBCASE("a value with spaces or control bytes stays one token") {
    CheckFinding g;
    g.fields = {{"value", "a b\tc\x01"}};
    CHECK(FormatCheckText("x", g) == "check=x status=ok value=a_b_c? msg=");
  }
}

TEST_CASE("a failing check is published at each reminder, a passing one only when it changes") {
  auto check = std::make_unique<ScriptedCheck>("scripted");
  ScriptedCheck* c = check.get();
  c->status_ = CheckStatus::kOk;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(check), Every(milliseconds(30)), ""});
  CheckSource::Options options;
  options.repeat_interval = milliseconds(0);  // every run
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());

  // The first pass is published (after a restart it clears what it must).
  std::vector<LogRecord> first = ReadChecks(**source, 1, milliseconds(3000));
  REQUIRE(first.size() == 1);
  CHECK(first[0].text.find("status=ok device=node counter=thing value=1 was=start") !=
        std::string::npos);
  // Later passes are not.
  const int runs_before = c->runs_.load();
  std::vector<LogRecord> quiet = ReadChecks(**source, 1, milliseconds(200));
  CHECK(quiet.empty());
  CHECK(c->runs_.load() > runs_before);

  c->status_ = CheckStatus::kFail;
  std::vector<LogRecord> fails = ReadChecks(**source, 3, milliseconds(3000));
  REQUIRE(fails.size() == 3);
  for (const LogRecord& r : fails) CHECK(r.labels.at("status") == "fail");
  CHECK(fails[0].cursor != fails[1].cursor);

  c->status_ = CheckStatus::kOk;
  std::vector<LogRecord> back = ReadChecks(**source, 5, milliseconds(3000));
  // Fails still in flight may precede it; the pass comes once.
  int oks = 0;
  for (const LogRecord& r : back) {
    if (r.labels.at("status") != "ok") continue;
    ++oks;
    // It names what it ends, so suppression never folds it into the first pass.
    CHECK(r.text.find("value=1 was=fail msg=") != std::string::npos);
  }
  CHECK(oks == 1);
}

TEST_CASE("an unchanged failure is repeated every repeat_interval, a changed one at once") {
  auto check = std::make_unique<ScriptedCheck>("scripted");
  ScriptedCheck* c = check.get();
  c->status_ = CheckStatus::kFail;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(check), Every(milliseconds(20)), ""});
  CheckSource::Options options;
  options.repeat_interval = milliseconds(400);
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  CHECK(ReadChecks(**source, 1, milliseconds(2000)).size() == 1);
  // ~10 runs within 200 ms, none published.
  CHECK(ReadChecks(**source, 1, milliseconds(200)).empty());
  CHECK(c->runs_.load() >= 5);
  // The reminder.
  const auto start = std::chrono::steady_clock::now();
  std::vector<LogRecord> again = ReadChecks(**source, 1, milliseconds(1000));
  REQUIRE(again.size() == 1);
  CHECK(std::chrono::steady_clock::now() - start >= milliseconds(100));
  CHECK(again[0].labels.at("status") == "fail");
  // A hung run changes the status of another key; unknown changes this one's.
  c->status_ = CheckStatus::kUnknown;
  std::vector<LogRecord> changed = ReadChecks(**source, 1, milliseconds(300));
  REQUIRE(changed.size() == 1);
  CHECK(changed[0].labels.at("status") == "unknown");
}

TEST_CASE("a hung check is reported as hung in time and does not hold up the other checks") {
  auto hung = std::make_unique<ScriptedCheck>("hangs");
  auto healthy = std::make_unique<ScriptedCheck>("healthy");
  ScriptedCheck* h = hung.get();
  ScriptedCheck* ok = healthy.get();
  h->block_ = milliseconds(1500);  // ignores its stop token, like a stuck library call
  ok->status_ = CheckStatus::kFail;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(hung), Every(milliseconds(5000), milliseconds(100)), ""});
  entries.push_back({std::move(healthy), Every(milliseconds(50)), ""});
  CheckSource::Options options;
  options.concurrency = 1;  // the hung run must give its slot back
  options.repeat_interval = milliseconds(0);
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());

  const auto start = std::chrono::steady_clock::now();
  std::vector<LogRecord> got;
  bool saw_hung = false;
  while (!saw_hung && std::chrono::steady_clock::now() - start < milliseconds(1000)) {
    for (LogRecord& r : ReadChecks(**source, 1, milliseconds(100))) {
      if (r.labels.at("check") == "hangs") {
        saw_hung = true;
        CHECK(r.text ==
              "check=hangs status=hung device=node counter=run value=100ms "
              "msg=the check did not finish within its timeout");
        CHECK(r.origin == Origin::kCheck);
      }
      got.push_back(std::move(r));
    }
  }
  CHECK(saw_hung);
  // Well before the hung run returns (1.5 s), the other check ran on.
  std::vector<LogRecord> more = ReadChecks(**source, 4, milliseconds(600));
  CHECK(more.size() == 4);
  for (const LogRecord& r : more) CHECK(r.labels.at("check") == "healthy");
  CHECK(h->runs_.load() == 1);  // not started again while hung
  CHECK((*source)->hung_runs() == 1);
}

TEST_CASE("a check that is hung past its next due time is reminded of") {
  auto hung = std::make_unique<ScriptedCheck>("hangs");
  hung->block_ = milliseconds(800);
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(hung), Every(milliseconds(200), milliseconds(50)), ""});
  CheckSource::Options options;
  options.repeat_interval = milliseconds(0);  // the reminder at each due time
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadChecks(**source, 2, milliseconds(700));
  REQUIRE(got.size() == 2);
  CHECK(got[0].text.find("did not finish") != std::string::npos);
  CHECK(got[1].text.find("still running") != std::string::npos);
  CHECK((*source)->hung_runs() == 1);
}

TEST_CASE("a check that finishes in time again says so") {
  auto check = std::make_unique<ScriptedCheck>("flaky");
  ScriptedCheck* c = check.get();
  c->block_ = milliseconds(300);
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(check), Every(milliseconds(100), milliseconds(100)), ""});
  auto source = CheckSource::Open({}, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> hung = ReadChecks(**source, 1, milliseconds(1000));
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].labels.at("status") == "hung");
  c->block_ = milliseconds(0);
  std::vector<LogRecord> back;
  const auto until = std::chrono::steady_clock::now() + milliseconds(3000);
  while (std::chrono::steady_clock::now() < until) {
    std::vector<LogRecord> got = ReadChecks(**source, 1, milliseconds(200));
    if (!got.empty() && got[0].labels.at("status") == "ok") {
      back = std::move(got);
      break;
    }
  }
  REQUIRE(back.size() == 1);
  CHECK(back[0].text.find("counter=run value=completed") != std::string::npos);
}

TEST_CASE("no more than `concurrency` checks run at once") {
  std::vector<CheckSource::Entry> entries;
  std::vector<ScriptedCheck*> checks;
  for (int i = 0; i < 5; ++i) {
    auto c = std::make_unique<ScriptedCheck>("c" + std::to_string(i));
    c->block_ = milliseconds(80);
    c->status_ = CheckStatus::kFail;
    checks.push_back(c.get());
    entries.push_back({std::move(c), Every(milliseconds(10)), ""});
  }
  CheckSource::Options options;
  options.concurrency = 2;
  options.repeat_interval = milliseconds(0);
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadChecks(**source, 10, milliseconds(3000));
  CHECK(got.size() == 10);
  // Each check counts only itself; the source counts the overlap: watch it.
  int total_max = 0;
  for (ScriptedCheck* c : checks) {
    CHECK(c->max_active_.load() == 1);  // never concurrently with itself
    total_max += c->runs_.load() > 0 ? 1 : 0;
  }
  CHECK(total_max == 5);  // every check got its turn
}

TEST_CASE("the source never runs more than `concurrency` checks at the same moment") {
  // One shared counter across checks.
  struct Shared {
    std::atomic<int> active{0};
    std::atomic<int> max{0};
  };
  auto shared = std::make_shared<Shared>();
  class Counting final : public Check {
   public:
    Counting(std::string n, std::shared_ptr<Shared> s) : name_(std::move(n)), s_(std::move(s)) {}
    std::string_view name() const override { return name_; }
    std::vector<CheckFinding> Run(std::stop_token) override {
      const int now = ++s_->active;
      int seen = s_->max.load();
      while (now > seen && !s_->max.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(milliseconds(40));
      --s_->active;
      CheckFinding f;
      f.status = CheckStatus::kFail;
      return {f};
    }

   private:
    std::string name_;
    std::shared_ptr<Shared> s_;
  };
  std::vector<CheckSource::Entry> entries;
  entries.reserve(6);
  for (int i = 0; i < 6; ++i) {
    entries.push_back(
        {std::make_unique<Counting>("k" + std::to_string(i), shared), Every(milliseconds(10)), ""});
  }
  CheckSource::Options options;
  options.concurrency = 2;
  options.repeat_interval = milliseconds(0);
  auto source = CheckSource::Open(options, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadChecks(**source, 18, milliseconds(5000));
  CHECK(got.size() == 18);
  CHECK(shared->max.load() == 2);
}

TEST_CASE("Read returns promptly when stopped, even with a check running") {
  auto check = std::make_unique<ScriptedCheck>("slow");
  check->block_ = milliseconds(5000);
  check->honour_stop_ = true;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(check), Every(milliseconds(60'000), milliseconds(30'000)), ""});
  auto source = CheckSource::Open({}, std::move(entries));
  REQUIRE(source.ok());
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  std::vector<LogRecord> out;
  const auto start = std::chrono::steady_clock::now();
  CHECK((*source)->Read(out, 10, stop.get_token()).ok());
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - start < milliseconds(1000));
  source->reset();  // the destructor stops the run, which honours it
}

TEST_CASE("bad schedules and duplicate names are refused") {
  SUBCASE("duplicate") {
    std::vector<CheckSource::Entry> entries;
    entries.push_back({std::make_unique<ScriptedCheck>("same"), Every(milliseconds(10)), ""});
    entries.push_back({std::make_unique<ScriptedCheck>("same"), Every(milliseconds(10)), ""});
    auto source = CheckSource::Open({}, std::move(entries));
    REQUIRE(!source.ok());
    CHECK(source.error().message().find("two checks are named 'same'") != std::string::npos);
  }
  SUBCASE("zero timeout") {
    std::vector<CheckSource::Entry> entries;
    entries.push_back(
        {std::make_unique<ScriptedCheck>("x"), Every(milliseconds(10), milliseconds(0)), ""});
    CHECK(!CheckSource::Open({}, std::move(entries)).ok());
  }
  SUBCASE("zero concurrency") {
    CheckSource::Options options;
    options.concurrency = 0;
    CHECK(!CheckSource::Open(options, {}).ok());
  }
}

}  // namespace
}  // namespace faultline
