// SPDX-License-Identifier: Apache-2.0
// The check source's round summaries (collector/checks/check_source.h,
// "Rounds"): the evidence the tainter needs before it lifts a fault after a
// reboot (tainter/README.md, "Return to service").
#include <atomic>
#include <thread>

#include <doctest/doctest.h>

#include "collector/checks/check_source.h"
#include "tests/collector/checks_test_util.h"

namespace faultline {
namespace {

using std::chrono::milliseconds;

// Reports the status the test sets; can block to play a hung check.
class SetCheck final : public Check {
 public:
  explicit SetCheck(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  std::vector<CheckFinding> Run(std::stop_token stop) override {
    ++runs_;
    const auto until = std::chrono::steady_clock::now() + block_.load();
    while (std::chrono::steady_clock::now() < until && !stop.stop_requested()) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    CheckFinding f;
    f.status = status_.load();
    f.fields = {{"device", "node"}, {"counter", "gpus"}, {"value", "7"}};
    f.message = f.status == CheckStatus::kOk ? "fine" : "7 of 8 GPUs";
    return {f};
  }
  std::atomic<CheckStatus> status_{CheckStatus::kOk};
  std::atomic<milliseconds> block_{milliseconds(0)};
  std::atomic<int> runs_{0};

 private:
  std::string name_;
};

CheckSchedule Every(milliseconds interval, milliseconds timeout = milliseconds(5000)) {
  CheckSchedule s;
  s.interval = interval;
  s.timeout = timeout;
  return s;
}

// The round summaries among `records`.
std::vector<LogRecord> Rounds(const std::vector<LogRecord>& records) {
  std::vector<LogRecord> out;
  for (const LogRecord& r : records) {
    if (r.labels.count("check") != 0 && r.labels.at("check") == "round") out.push_back(r);
  }
  return out;
}

// Reads until `want` round summaries arrived or `timeout` passed.
std::vector<LogRecord> ReadRounds(CheckSource& source, std::size_t want, milliseconds timeout) {
  std::vector<LogRecord> rounds;
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (rounds.size() < want && std::chrono::steady_clock::now() < until) {
    for (LogRecord& r : Rounds(ReadChecks(source, 1, milliseconds(100)))) {
      rounds.push_back(std::move(r));
    }
  }
  return rounds;
}

CheckSource::Options WithRounds() {
  CheckSource::Options o;
  o.rounds = true;
  o.repeat_interval = milliseconds(0);
  return o;
}

TEST_CASE("a round summary on the first complete round, then only when the verdict changes") {
  auto a = std::make_unique<SetCheck>("gpu-inventory");
  auto b = std::make_unique<SetCheck>("nvml");
  SetCheck* nvml = b.get();
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(a), Every(milliseconds(20)), ""});
  entries.push_back({std::move(b), Every(milliseconds(20)), ""});
  auto source = CheckSource::Open(WithRounds(), std::move(entries));
  REQUIRE(source.ok());

  std::vector<LogRecord> first = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(first.size() == 1);
  CHECK(first[0].origin == Origin::kCheck);
  CHECK(first[0].text ==
        "check=round status=ok device=node counter=round value=2 expected=2 "
        "checks=gpu-inventory,nvml msg=every check passed");
  // Many more passing rounds: nothing new to say.
  CHECK(ReadRounds(**source, 1, milliseconds(300)).empty());
  CHECK(nvml->runs_.load() >= 5);

  // One check fails: the round's verdict changes, with the check's message.
  nvml->status_ = CheckStatus::kFail;
  std::vector<LogRecord> failed = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].text ==
        "check=round status=fail device=node counter=round value=1 expected=2 "
        "checks=gpu-inventory,nvml failed=nvml msg=nvml: 7 of 8 GPUs (node gpus 7)");
  CHECK(ReadRounds(**source, 1, milliseconds(300)).empty());  // still failing: said once

  nvml->status_ = CheckStatus::kOk;
  std::vector<LogRecord> back = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(back.size() == 1);
  CHECK(back[0].labels.at("status") == "ok");
}

TEST_CASE("a hung check fails its round") {
  auto a = std::make_unique<SetCheck>("quick");
  auto b = std::make_unique<SetCheck>("stuck");
  b->block_ = milliseconds(10'000);
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(a), Every(milliseconds(20)), ""});
  entries.push_back({std::move(b), Every(milliseconds(200), milliseconds(50)), ""});
  auto source = CheckSource::Open(WithRounds(), std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> rounds = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(rounds.size() == 1);
  CHECK(rounds[0].labels.at("status") == "fail");
  CHECK(rounds[0].labels.at("failed") == "stuck");
}

TEST_CASE("a validation check runs until it passes once, and later rounds count that pass") {
  auto a = std::make_unique<SetCheck>("gpu-inventory");
  auto v = std::make_unique<SetCheck>("dcgm-diag");
  SetCheck* diag = v.get();
  diag->status_ = CheckStatus::kFail;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(a), Every(milliseconds(20)), ""});
  entries.push_back({std::move(v), Every(milliseconds(20)), "", /*validation=*/true});
  auto source = CheckSource::Open(WithRounds(), std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> rounds = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(rounds.size() == 1);
  CHECK(rounds[0].labels.at("failed") == "dcgm-diag");
  // Failing, it is tried again at its interval.
  const int tries = diag->runs_.load();
  diag->status_ = CheckStatus::kOk;
  rounds = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(rounds.size() == 1);
  CHECK(rounds[0].labels.at("status") == "ok");
  CHECK(diag->runs_.load() > tries);
  // Passed once: never run again; the other check's rounds still complete.
  const int after = diag->runs_.load();
  std::this_thread::sleep_for(milliseconds(200));
  ReadChecks(**source, 10, milliseconds(100));
  CHECK(diag->runs_.load() == after);
}

TEST_CASE("an advisory failure does not hold back a round, a validation check's always does") {
  // The agent's answer: only a failure a tainting rule matches counts (here:
  // not the lifetime ECC count, an Event by the built-in rules).
  auto a = std::make_unique<SetCheck>("nvml");
  auto v = std::make_unique<SetCheck>("dcgm-diag");
  a->status_ = CheckStatus::kFail;
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::move(a), Every(milliseconds(20)), ""});
  entries.push_back({std::move(v), Every(milliseconds(20)), "", /*validation=*/true});
  CheckSource::Options o = WithRounds();
  std::atomic<int> asked{0};
  o.fail_holds_round = [&asked](const LogRecord& record) {
    ++asked;
    return record.text.find("check=dcgm-diag") != std::string::npos;  // never the nvml one
  };
  auto source = CheckSource::Open(o, std::move(entries));
  REQUIRE(source.ok());
  std::vector<LogRecord> rounds = ReadRounds(**source, 1, milliseconds(3000));
  REQUIRE(rounds.size() == 1);
  CHECK(rounds[0].labels.at("status") == "ok");  // the nvml failure is advisory
  CHECK(asked.load() > 0);
  // A new source whose validation check fails: that always holds the round,
  // whatever the predicate says.
  std::vector<CheckSource::Entry> again;
  auto v2 = std::make_unique<SetCheck>("dcgm-diag");
  v2->status_ = CheckStatus::kFail;
  again.push_back({std::move(v2), Every(milliseconds(20)), "", /*validation=*/true});
  CheckSource::Options never = WithRounds();
  never.fail_holds_round = [](const LogRecord&) { return false; };
  auto second = CheckSource::Open(never, std::move(again));
  REQUIRE(second.ok());
  rounds = ReadRounds(**second, 1, milliseconds(3000));
  REQUIRE(rounds.size() == 1);
  CHECK(rounds[0].labels.at("failed") == "dcgm-diag");
}

TEST_CASE("the name 'round' is the summary's, and rounds are off unless asked for") {
  std::vector<CheckSource::Entry> entries;
  entries.push_back({std::make_unique<SetCheck>("round"), Every(milliseconds(20)), ""});
  CHECK(CheckSource::Open(WithRounds(), std::move(entries)).status().code() ==
        StatusCode::kInvalidArgument);

  std::vector<CheckSource::Entry> plain;
  plain.push_back({std::make_unique<SetCheck>("gpu-inventory"), Every(milliseconds(20)), ""});
  CheckSource::Options o;
  auto source = CheckSource::Open(o, std::move(plain));
  REQUIRE(source.ok());
  std::vector<LogRecord> got = ReadChecks(**source, 5, milliseconds(300));
  CHECK_FALSE(got.empty());
  CHECK(Rounds(got).empty());
}

}  // namespace
}  // namespace faultline
