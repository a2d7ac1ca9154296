// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/check_once.h"

#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "base/config_reader.h"
#include "base/diagnostics.h"
#include "collector/agent/agent_config.h"
#include "collector/checks/checks_config.h"
#include "matcher/rule_set.h"

namespace faultline {
namespace {

// CheckSource::Read for at most `wait` (it blocks until a record or stop).
Status ReadFor(CheckSource& source, std::vector<LogRecord>& out, std::chrono::milliseconds wait) {
  std::stop_source stop;
  std::jthread timer([&stop, wait](const std::stop_token& cancel) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait_for(lock, cancel, wait, [] { return false; });
    stop.request_stop();
  });
  return source.Read(out, 256, stop.get_token());
}

// One line: no control characters (a newline would split Slurm's Reason).
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return s;
}

}  // namespace

int RunCheckOnce(const CheckOnceOptions& options, std::ostream& out, std::ostream& err) {
  std::string text;
  if (!options.config_path.empty()) {
    if (Status s = ReadConfigText(options.config_path, text); !s.ok()) {
      err << "faultline-agent: " << s.message() << '\n';
      return 2;
    }
  }
  // Standalone's parse: no Kafka is needed, and an empty text is the defaults.
  Diagnostics diags;
  const std::string file = options.config_path.empty() ? "(defaults)" : options.config_path;
  std::optional<AgentConfig> config = ParseAgentConfig(text, file, diags, AgentMode::kStandalone);
  diags.Print(err, {{file, text}});
  if (!config) return 2;
  SourceTexts texts;
  Diagnostics rule_diags;
  std::shared_ptr<const RuleSet> rules = LoadRules(config->rules, {}, rule_diags, texts);
  if (!rules) {
    rule_diags.Print(err, texts);
    return 2;
  }
  // Every check at once, now: one look, not a schedule.
  config->checks.jitter = std::chrono::milliseconds(0);
  Result<std::unique_ptr<CheckSource>> source = OpenCheckSource(config->checks, RealClock());
  if (!source) {
    err << "faultline-agent: checks: " << source.error().message() << '\n';
    return 2;
  }
  if (*source == nullptr) {
    err << "faultline-agent: --check-once: no check is enabled (checks.enabled)\n";
    return 2;
  }
  CheckSource& checks = **source;
  std::vector<LogRecord> records;
  const auto start = std::chrono::steady_clock::now();
  auto last_news = start;
  std::uint64_t runs = 0;
  for (;;) {
    const std::size_t before = records.size();
    if (Status s = ReadFor(checks, records, std::chrono::milliseconds(200)); !s.ok()) {
      err << "faultline-agent: checks: " << s.message() << '\n';
      return 2;
    }
    const auto now = std::chrono::steady_clock::now();
    if (records.size() != before || checks.runs() != runs) {
      runs = checks.runs();
      last_news = now;
    }
    if ((runs > 0 && now - last_news >= options.settle) || now - start >= options.limit) break;
  }

  std::vector<std::string> failures;
  std::vector<RuleMatch> matches;
  for (const LogRecord& record : records) {
    matches.clear();
    rules->Match(record, matches);
    for (const RuleMatch& m : matches) {
      if (m.action == Action::kIgnore) continue;
      const bool one_look = !m.threshold || m.threshold->count <= 1;
      const std::string line = m.rule->id + ": " + OneLine(m.summary);
      if (m.action == Action::kTaint && one_look) {
        failures.push_back(line);
        err << "faultline-agent: FAIL " << line << " [" << OneLine(record.text) << "]\n";
      } else {
        err << "faultline-agent: note " << line << " [" << OneLine(record.text) << "]\n";
      }
    }
  }
  if (failures.empty()) return 0;
  out << "faultline: " << failures.front();
  if (failures.size() > 1) out << " (+" << failures.size() - 1 << " more)";
  out << '\n';
  return 1;
}

}  // namespace faultline
