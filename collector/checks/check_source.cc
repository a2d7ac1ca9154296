// SPDX-License-Identifier: Apache-2.0
#include "collector/checks/check_source.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <utility>

#include "base/log.h"
#include "collector/checks/check_record.h"
#include "collector/sources/produced_records.h"

namespace faultline {

// A finished run, posted by its worker thread.
struct CheckRun {
  std::size_t index = 0;
  std::uint64_t run = 0;
  std::vector<CheckFinding> findings;
};

struct CheckSource::Inbox {
  std::mutex mu;
  std::condition_variable_any cv;
  std::deque<CheckRun> done;
};

namespace {

constexpr std::string_view kComponent = "checks";
// The summary's check name; no check may take it.
constexpr std::string_view kRoundCheck = "round";

std::string DurationText(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

}  // namespace

CheckSource::CheckSource(const Options& options, const Clock& clock)
    : options_(options),
      clock_(clock),
      inbox_(std::make_shared<Inbox>()),
      random_(std::random_device{}()) {
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock.Now().time_since_epoch());
  cursor_prefix_ = std::to_string(ns.count()) + ":";
}

Result<std::unique_ptr<CheckSource>> CheckSource::Open(const Options& options,
                                                       std::vector<Entry> checks,
                                                       const Clock& clock) {
  if (options.concurrency == 0) return InvalidArgumentError("checks: concurrency must be >= 1");
  if (options.repeat_interval.count() < 0) {
    return InvalidArgumentError("checks: repeat_interval must be >= 0");
  }
  for (const auto& [group, limit] : options.group_concurrency) {
    if (limit == 0) {
      return InvalidArgumentError("checks: concurrency of '" + group + "' must be >= 1");
    }
  }
  std::unique_ptr<CheckSource> source(new CheckSource(options, clock));
  std::set<std::string, std::less<>> names;
  const SteadyTime now = std::chrono::steady_clock::now();
  for (Entry& e : checks) {
    if (!e.check) return InvalidArgumentError("checks: a check is missing");
    std::string name(e.check->name());
    if (name.empty()) return InvalidArgumentError("checks: a check has no name");
    if (name == kRoundCheck) {
      return InvalidArgumentError("checks: the name 'round' is reserved for the round summary");
    }
    if (!names.insert(name).second) {
      return InvalidArgumentError("checks: two checks are named '" + name + "'");
    }
    if (e.schedule.interval.count() <= 0 || e.schedule.timeout.count() <= 0 ||
        e.schedule.jitter.count() < 0) {
      return InvalidArgumentError("checks: '" + name +
                                  "' needs a positive interval and timeout, and jitter >= 0");
    }
    Slot slot;
    slot.check = std::move(e.check);
    slot.name = std::move(name);
    slot.schedule = e.schedule;
    slot.group = std::move(e.group);
    slot.validation = e.validation;
    source->slots_.push_back(std::move(slot));
  }
  source->round_.assign(source->slots_.size(), kRoundPending);
  for (Slot& slot : source->slots_) {
    slot.next_due = source->NextDue(slot, now) - slot.schedule.interval;
  }
  return source;
}

CheckSource::~CheckSource() {
  for (Slot& slot : slots_) {
    if (slot.running) slot.stop.request_stop();
  }
  // Give the runs a moment to return; join those that did. A run that is
  // still blocked is detached: it holds the inbox and the check by
  // shared_ptr, so nothing it touches goes away under it.
  const SteadyTime until = std::chrono::steady_clock::now() + options_.shutdown_wait;
  std::unique_lock lock(inbox_->mu);
  for (;;) {
    for (CheckRun& done : inbox_->done) {
      Slot& slot = slots_[done.index];
      if (slot.running && slot.run == done.run) slot.running = false;
    }
    inbox_->done.clear();
    const bool any =
        std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.running; });
    if (!any) break;
    if (inbox_->cv.wait_until(lock, until) == std::cv_status::timeout) break;
  }
  lock.unlock();
  for (Slot& slot : slots_) {
    if (!slot.thread.joinable()) continue;
    if (slot.running) {
      LogWarning(kComponent, "check still running at shutdown; leaving it", {{"check", slot.name}});
      slot.thread.detach();
    } else {
      slot.thread.join();
    }
  }
}

CheckSource::SteadyTime CheckSource::NextDue(const Slot& slot, SteadyTime from) {
  std::chrono::milliseconds delay = slot.schedule.interval;
  if (slot.schedule.jitter.count() > 0) {
    std::uniform_int_distribution<std::int64_t> jitter(0, slot.schedule.jitter.count());
    delay += std::chrono::milliseconds(jitter(random_));
  }
  return from + delay;
}

void CheckSource::Launch(std::size_t index, SteadyTime now) {
  Slot& slot = slots_[index];
  if (slot.thread.joinable()) slot.thread.join();  // the previous run posted its result
  slot.running = true;
  slot.hung = false;
  ++slot.run;
  slot.deadline = now + slot.schedule.timeout;
  slot.next_due = NextDue(slot, now);
  slot.stop = std::stop_source();
  runs_.fetch_add(1, std::memory_order_relaxed);
  slot.thread = std::thread(
      [inbox = inbox_, check = slot.check, index, run = slot.run, token = slot.stop.get_token()] {
        CheckRun done;
        done.index = index;
        done.run = run;
        done.findings = check->Run(token);
        {
          std::lock_guard lock(inbox->mu);
          inbox->done.push_back(std::move(done));
        }
        inbox->cv.notify_all();
      });
}

void CheckSource::Collect() {
  std::deque<CheckRun> done;
  {
    std::lock_guard lock(inbox_->mu);
    done.swap(inbox_->done);
  }
  for (CheckRun& d : done) {
    Slot& slot = slots_[d.index];
    if (!slot.running || slot.run != d.run) continue;
    slot.running = false;
    if (slot.thread.joinable()) slot.thread.join();
    if (slot.hung) {
      // Reported as hung already; what it found so late is stale.
      LogInfo(kComponent, "hung check returned", {{"check", slot.name}});
      slot.hung = false;
      slot.last_hung = true;
      continue;
    }
    if (slot.last_hung) {
      slot.last_hung = false;
      CheckFinding back;
      back.status = CheckStatus::kOk;
      back.fields = {{"device", "node"}, {"counter", "run"}, {"value", "completed"}};
      back.message = "the check finishes within its timeout again";
      d.findings.insert(d.findings.begin(), std::move(back));
    }
    Publish(slot, d.findings);
    NoteRound(d.index, d.findings);
  }
}

void CheckSource::NoteRound(std::size_t index, const std::vector<CheckFinding>& findings) {
  Slot& slot = slots_[index];
  const auto bad = std::find_if(findings.begin(), findings.end(), [&](const CheckFinding& f) {
    if (f.status == CheckStatus::kOk) return false;
    if (f.status != CheckStatus::kFail || slot.validation || !options_.fail_holds_round) {
      return true;
    }
    return options_.fail_holds_round(MakeCheckRecord(slot.name, f));
  });
  if (bad == findings.end()) {
    if (slot.validation && !slot.validated) {
      slot.validated = true;  // passed once in this boot: not run again
      slot.next_due = SteadyTime::max();
      LogInfo(kComponent, "validation check passed", {{"check", slot.name}});
    }
    round_.at(index) = std::max(round_[index], kRoundPassed);
  } else if (round_.at(index) != kRoundFailed) {
    round_[index] = kRoundFailed;  // the worst result of the round counts
    if (round_failure_.empty()) {
      round_failed_check_ = slot.name;
      round_failure_ = slot.name + ": " + bad->message + " (" + bad->Field("device") + " " +
                       bad->Field("counter") + " " + bad->Field("value") + ")";
    }
  }
  if (!options_.rounds) return;
  if (std::find(round_.begin(), round_.end(), kRoundPending) != round_.end()) return;

  const auto failures =
      static_cast<std::size_t>(std::count(round_.begin(), round_.end(), kRoundFailed));
  const bool pass = failures == 0;
  if (last_verdict_ != static_cast<int>(pass)) {
    std::string names;
    for (const Slot& s : slots_) names += (names.empty() ? "" : ",") + s.name;
    CheckFinding summary;
    summary.status = pass ? CheckStatus::kOk : CheckStatus::kFail;
    summary.fields = {{"device", "node"},
                      {"counter", "round"},
                      {"value", std::to_string(slots_.size() - failures)},
                      {"expected", std::to_string(slots_.size())},
                      {"checks", names}};
    if (pass) {
      summary.message = "every check passed";
    } else {
      summary.fields.emplace_back("failed", round_failed_check_);
      summary.message = round_failure_;
    }
    LogInfo(kComponent, pass ? "check round passed" : "check round failed",
            {{"checks", names}, {"failed", round_failed_check_}});
    LogRecord r = MakeCheckRecord(kRoundCheck, summary);
    r.time = clock_.Now();
    PushRecord(std::move(r));
    last_verdict_ = static_cast<int>(pass);
  }
  // The next round; a validation check that passed counts as passed in it.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    round_[i] = slots_[i].validated ? kRoundPassed : kRoundPending;
  }
  round_failed_check_.clear();
  round_failure_.clear();
}

void CheckSource::PushRecord(LogRecord r) {
  r.cursor = cursor_prefix_ + std::to_string(++sequence_);
  SourceCounters::Add(counters_.records);
  SourceCounters::Add(counters_.bytes, r.text.size());
  ready_.push_back(std::move(r));
}

void CheckSource::ExpireAndLaunch(SteadyTime now) {
  std::size_t active = 0;
  std::map<std::string_view, std::size_t> group_active;
  for (std::size_t index = 0; index < slots_.size(); ++index) {
    Slot& slot = slots_[index];
    if (!slot.running) continue;
    const bool expired = !slot.hung && now >= slot.deadline;
    const bool still_hung = slot.hung && now >= slot.next_due;
    if (expired || still_hung) {
      if (expired) {
        slot.hung = true;
        slot.stop.request_stop();
        hung_runs_.fetch_add(1, std::memory_order_relaxed);
        LogWarning(kComponent, "check hung",
                   {{"check", slot.name}, {"timeout", DurationText(slot.schedule.timeout)}});
      }
      slot.next_due = NextDue(slot, now);
      CheckFinding hung;
      hung.status = CheckStatus::kHung;
      hung.fields = {
          {"device", "node"}, {"counter", "run"}, {"value", DurationText(slot.schedule.timeout)}};
      hung.message = expired ? "the check did not finish within its timeout"
                             : "the check is still running after its timeout";
      Publish(slot, {hung});
      if (expired) NoteRound(index, {hung});
    }
    if (!slot.hung) {
      ++active;
      ++group_active[slot.group];
    }
  }
  // Due checks, the longest overdue first, while there is capacity.
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].running && slots_[i].next_due <= now) due.push_back(i);
  }
  std::sort(due.begin(), due.end(),
            [&](std::size_t a, std::size_t b) { return slots_[a].next_due < slots_[b].next_due; });
  for (std::size_t i : due) {
    if (active >= options_.concurrency) break;
    const std::string& group = slots_[i].group;
    if (auto limit = options_.group_concurrency.find(group);
        !group.empty() && limit != options_.group_concurrency.end() &&
        group_active[group] >= limit->second) {
      continue;
    }
    Launch(i, now);
    ++active;
    ++group_active[group];
  }
}

CheckSource::SteadyTime CheckSource::NextWake(SteadyTime now) const {
  SteadyTime wake = SteadyTime::max();
  for (const Slot& slot : slots_) {
    if (slot.running && !slot.hung) {
      wake = std::min(wake, slot.deadline);
    } else if (slot.running || slot.next_due > now) {
      // A hung run repeats its record at next_due; an idle check starts
      // then. An idle check already due waits for capacity: a finishing
      // run wakes us.
      wake = std::min(wake, slot.next_due);
    }
  }
  return wake;
}

void CheckSource::Publish(const Slot& slot, const std::vector<CheckFinding>& findings) {
  const auto now = clock_.Now();
  const SteadyTime steady_now = std::chrono::steady_clock::now();
  for (const CheckFinding& f : findings) {
    std::string key = slot.name + '\0' + f.Field("device") + '\0' + f.Field("counter");
    std::string value = f.Field("value");
    auto [it, first] = last_.try_emplace(std::move(key));
    Published& last = it->second;
    const bool changed =
        first || last.status != f.status || (f.status != CheckStatus::kOk && last.value != value);
    const bool remind =
        f.status != CheckStatus::kOk && steady_now - last.at >= options_.repeat_interval;
    if (!changed && !remind) continue;
    // A pass says what it follows ("start", or the status it ends), so two
    // passes around a failure differ in their captures: the agent's
    // suppression would otherwise fold the second into the first's window
    // and hold back the record that clears the fault.
    CheckFinding with_was;
    const CheckFinding* publish = &f;
    if (f.status == CheckStatus::kOk) {
      with_was = f;
      with_was.fields.emplace_back("was",
                                   first ? "start" : std::string(CheckStatusName(last.status)));
      publish = &with_was;
    }
    last.status = f.status;
    last.value = std::move(value);
    last.at = steady_now;
    LogRecord r = MakeCheckRecord(slot.name, *publish);
    r.time = now;
    PushRecord(std::move(r));
  }
}

Status CheckSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                         std::stop_token stop) {
  return ReadProducedRecords(
      ready_, out, max_records, stop,
      [this] {
        Collect();
        ExpireAndLaunch(std::chrono::steady_clock::now());
      },
      [this, &stop] {
        // Sleep until a run finishes, a deadline or a due time passes, or
        // stop; at most 1 s, so that a long interval never hides a missed
        // wake-up.
        const SteadyTime now = std::chrono::steady_clock::now();
        const SteadyTime wake = std::min(NextWake(now), now + std::chrono::seconds(1));
        std::unique_lock lock(inbox_->mu);
        inbox_->cv.wait_until(lock, stop, wake, [&] { return !inbox_->done.empty(); });
        return OkStatus();
      });
}

}  // namespace faultline
