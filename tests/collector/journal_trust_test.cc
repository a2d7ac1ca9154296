// SPDX-License-Identifier: Apache-2.0
// Issue 11.7: three built-in rules taint on one journal line. Any local user
// can write that text with `logger`; only journald's trusted _SYSTEMD_UNIT and
// _UID tell the real writer apart. Real journal files (systemd-journal-remote),
// the journal source and the built-in rule packs.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "collector/sources/journal_source.h"
#include "matcher/rule_set.h"
#include "tests/support/journal_fixture.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

TEST_CASE("a forged journal line does not taint, the real unit's line does") {
  if (!JournalRemoteAvailable()) {
    MESSAGE("SKIPPED: " << kJournalRemote << " is not installed (systemd-journal-remote)");
    return;
  }
  const std::string dbe = "Detected 2 volatile double-bit ECC error(s) in GPU 1.";
  const std::string remap =
      "DCGM health: GPU 3 had uncorrectable memory errors and row remapping failed.";
  const std::string fm = "nvidia-fabricmanager.service: Failed with result 'exit-code'.";
  // Who wrote it: the real writer, then `logger` run by uid 1000 in a login
  // session, then root's cron job.
  struct Writer {
    std::string unit, uid, transport;
  };
  const Writer dcgm{"nvidia-dcgm.service", "0", "stdout"};
  const Writer systemd{"init.scope", "0", "journal"};
  const Writer user{"session-3.scope", "1000", "syslog"};
  const Writer cron{"cron.service", "0", "syslog"};
  JournalExportGenerator gen;
  const auto add = [&gen](const Writer& w, const std::string& ident, const std::string& text) {
    gen.Add({{"_TRANSPORT", w.transport},
             {"_SYSTEMD_UNIT", w.unit},
             {"_UID", w.uid},
             {"PRIORITY", "3"},
             {"SYSLOG_IDENTIFIER", ident},
             {"MESSAGE", text}});
  };
  add(user, "nv-hostengine", dbe);
  add(cron, "nv-hostengine", dbe);
  add(dcgm, "nv-hostengine", dbe);
  add(user, "nv-hostengine", remap);
  add(dcgm, "nv-hostengine", remap);
  add(user, "systemd", fm);
  add(systemd, "systemd", fm);

  TempDir tmp;
  std::filesystem::create_directories(tmp / "j");
  REQUIRE(WriteJournal(tmp / "j/a.journal", gen.Take(), tmp / "export"));
  JournalSource::Options o;
  o.directory = tmp / "j";
  o.start = JournalSource::Start::kHead;
  auto src = JournalSource::Open(o);
  REQUIRE_MESSAGE(src.ok(), src.error().message());
  std::vector<LogRecord> records = ReadUntil(**src, 7, std::chrono::milliseconds(5000));
  REQUIRE(records.size() == 7);
  CHECK(records[2].labels.at("unit") == "nvidia-dcgm.service");
  CHECK(records[2].labels.at("uid") == "0");

  Diagnostics diags;
  SourceTexts texts;
  auto rules = LoadRules({}, {}, diags, texts);
  REQUIRE(rules);
  std::vector<std::string> taints;  // "<record index> <rule>"
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::vector<RuleMatch> matches;
    rules->Match(records[i], matches);
    for (const RuleMatch& m : matches) {
      if (m.action == Action::kTaint) taints.push_back(std::to_string(i) + " " + m.rule->id);
    }
  }
  CHECK(taints == std::vector<std::string>{"2 nvidia.dcgm-volatile-dbe",
                                           "4 nvidia.dcgm-row-remap-failure",
                                           "6 nvidia.fabricmanager-failed"});
}

}  // namespace
}  // namespace faultline
