// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "collector/checks/check.h"
#include "collector/sources/source.h"
#include "collector/sources/source_counters.h"

namespace faultline {

// When and for how long one check runs.
struct CheckSchedule {
  std::chrono::milliseconds interval{60'000};  // from the start of one run to the next
  std::chrono::milliseconds timeout{10'000};   // a run still going after this is hung
  // Each run starts up to this much later than its interval says (uniform),
  // so a fleet's nodes do not all run a check in the same second. The first
  // run is also delayed by up to `jitter` after start.
  std::chrono::milliseconds jitter{0};
};

// The active checks as a Source: runs each Check on its schedule and turns
// its findings into records (CheckFinding -> MakeCheckRecord) that go through
// the rules, suppression and the sink like log lines. Origin `check`.
//
// Threads. Read() (the pipeline's thread for this source) only schedules
// and collects; every run happens on a std::thread of its own, so a check
// that blocks (a hung NVML call, a child process) never blocks Read(),
// other checks, or any other source. At most `concurrency` runs that are not
// hung go at once; a due check waits for a free slot.
//
// Timeouts. A run still going after its timeout is reported at once as a
// record `check=<name> status=hung device=node counter=run value=<timeout>`,
// its stop token is requested (an exec check kills its process group), and
// it no longer holds a concurrency slot. The check is not started again
// until that run returns (what it returns then is dropped, being stale);
// while it stays hung, a hung record is repeated every interval. The next
// run that finishes in time is preceded by `status=ok counter=run`.
//
// What is published. Per (check, device, counter): the first result since
// start, whatever it is (after a restart, a reboot included, the first
// passing round is always reported, which is what lets a `clear:` rule lift
// the fault); then a change of status, or of value while not ok (7 GPUs,
// then 6); and while a finding stays not ok, a reminder every
// `repeat_interval`, which keeps an `expire:` reason alive and lets
// thresholds count. Keep repeat_interval above the agent's
// suppression_window: a repeat folded there would come out as a follow-up
// at the window's end, possibly after the passing record, and the tainter
// would take it for a fault recurring after its recovery.
//
// Rounds (the evidence for a verified return to service; tainter/README.md
// "Return to service"). A round closes once every check has returned a
// result since the last round closed (a hung run is a result: a failing
// one). Its verdict is pass when no finding of the round is unknown, hung or
// error, and no failing one holds it back (Options::fail_holds_round). The
// source publishes one summary record
//   check=round status=<ok|fail> device=node counter=round value=<passed>
//   expected=<checks> checks=<a,b,...>[ failed=<check>] msg=<why>
// for the first round after start (after a reboot the agent starts again,
// so the first round of every boot is reported) and whenever a round's
// verdict differs from the previous round's. A check marked `validation`
// (an exec check an operator wants passed once after the boot, such as
// `dcgmi diag -r 2`) is not run again once it passed: later rounds count
// that pass. The name "round" is reserved for the summary.
//
// Cursors are "<start time in ns>:<sequence>", unique per process, so two
// runs' records never share an event id; there is nothing to resume, so
// Commit() and SaveCheckpoint() do nothing.
class CheckSource final : public Source {
 public:
  struct Entry {
    std::unique_ptr<Check> check;
    CheckSchedule schedule;
    // Checks of one group share the group's limit in Options (an NPD
    // config's `concurrency`), besides the source's own.
    std::string group;
    // Must pass once after the boot; not run again once it has (see Rounds).
    bool validation = false;
  };
  struct Options {
    std::size_t concurrency = 2;  // runs at once that are not hung (>= 1)
    // The destructor waits this long for running checks to return after
    // their stop; the rest are left running (detached), since a thread
    // blocked in a library call cannot be cancelled.
    std::chrono::milliseconds shutdown_wait{2000};
    std::map<std::string, std::size_t> group_concurrency;  // group -> runs at once (>= 1)
    std::chrono::milliseconds repeat_interval{300'000};    // reminder of an unchanged failure
    // Publish the round summaries (see Rounds); the agent's source does
    // (OpenCheckSource), a bare source in a test need not.
    bool rounds = false;
    // Whether a failing finding (status fail) keeps its round from passing,
    // given its record; the agent answers "a rule with action taint matches
    // it", so an advisory failure (lifetime ECC over a threshold, non-fatal
    // AER: Events by the built-in rules) does not keep a healthy node out.
    // Unset: every failing finding does. A finding that is unknown, hung or
    // error, and any failure of a `validation` check, always does.
    std::function<bool(const LogRecord& record)> fail_holds_round;
  };

  // kInvalidArgument: concurrency 0, an interval or timeout <= 0, two checks
  // with one name, a check without one, or a group limit of 0. `clock` gives records their wall
  // time and must outlive the source.
  static Result<std::unique_ptr<CheckSource>> Open(const Options& options,
                                                   std::vector<Entry> checks,
                                                   const Clock& clock = RealClock());
  ~CheckSource() override;
  CheckSource(const CheckSource&) = delete;
  CheckSource& operator=(const CheckSource&) = delete;

  // Source
  std::string_view name() const override { return "checks"; }
  Status Read(std::vector<LogRecord>& out, std::size_t max_records, std::stop_token stop) override;
  void Commit(std::string_view /*cursor*/) override {}
  Status SaveCheckpoint() override { return OkStatus(); }
  SourceStats stats() const override { return counters_.Snapshot(); }

  // Runs started, and runs that exceeded their timeout (any thread).
  std::uint64_t runs() const { return runs_.load(std::memory_order_relaxed); }
  std::uint64_t hung_runs() const { return hung_runs_.load(std::memory_order_relaxed); }

  struct Inbox;  // finished runs, shared with the worker threads

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Slot {
    std::shared_ptr<Check> check;
    std::string name;
    CheckSchedule schedule;
    std::string group;
    SteadyTime next_due;
    bool running = false;
    bool hung = false;       // the current run exceeded its timeout
    bool last_hung = false;  // the previous run was reported hung
    std::uint64_t run = 0;   // number of the current run
    bool validation = false;
    bool validated = false;  // a validation check that passed: never run again
    SteadyTime deadline;
    std::stop_source stop;
    std::thread thread;
  };

  CheckSource(const Options& options, const Clock& clock);
  void Collect();
  void ExpireAndLaunch(SteadyTime now);
  void Launch(std::size_t index, SteadyTime now);
  SteadyTime NextDue(const Slot& slot, SteadyTime from);
  SteadyTime NextWake(SteadyTime now) const;
  void Publish(const Slot& slot, const std::vector<CheckFinding>& findings);
  // Counts a run's result in the current round; closes the round (and
  // publishes its summary when due) once every check has one.
  void NoteRound(std::size_t index, const std::vector<CheckFinding>& findings);
  void PushRecord(LogRecord r);

  const Options options_;
  const Clock& clock_;
  std::shared_ptr<Inbox> inbox_;
  std::vector<Slot> slots_;
  std::deque<LogRecord> ready_;
  struct Published {
    CheckStatus status = CheckStatus::kOk;
    std::string value;
    SteadyTime at;
  };
  std::map<std::string, Published> last_;  // (check, device, counter) -> last published
  // The round in progress: each check's worst result so far, and the
  // round's first failure.
  static constexpr char kRoundPending = 0;
  static constexpr char kRoundPassed = 1;
  static constexpr char kRoundFailed = 2;
  std::vector<char> round_;
  std::string round_failed_check_;
  std::string round_failure_;
  int last_verdict_ = -1;  // -1: no round closed yet; 0 fail; 1 pass
  std::mt19937_64 random_;
  std::string cursor_prefix_;
  std::uint64_t sequence_ = 0;
  SourceCounters counters_;
  std::atomic<std::uint64_t> runs_{0};
  std::atomic<std::uint64_t> hung_runs_{0};
};

}  // namespace faultline
