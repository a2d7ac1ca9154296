// SPDX-License-Identifier: Apache-2.0
#pragma once

// Real journal files for tests, made the way TESTING-NOTES §2 describes: a
// journal export-format stream fed to systemd-journal-remote, which writes
// (or appends to) a .journal file with no daemon running.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace faultline {

inline constexpr const char* kJournalRemote = "/lib/systemd/systemd-journal-remote";

inline bool JournalRemoteAvailable() { return ::access(kJournalRemote, X_OK) == 0; }

// /proc/sys/kernel/random/boot_id without dashes, as _BOOT_ID spells it.
inline std::string CurrentBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  std::string out;
  for (char c : id) {
    if (c != '-') out.push_back(c);
  }
  return out;
}

using JournalFields = std::vector<std::pair<std::string, std::string>>;

// Builds export-format text. Every entry gets a unique, increasing
// __REALTIME_TIMESTAMP and __MONOTONIC_TIMESTAMP and this boot's _BOOT_ID
// (without distinct monotonic stamps seek_cursor lands on the wrong entry).
// Keep one generator per test and reuse it for appends so that stamps keep
// increasing across systemd-journal-remote runs.
class JournalExportGenerator {
 public:
  // Realtime stamps start `back` before now, i.e. within the current boot
  // unless the machine booted less than `back` ago.
  explicit JournalExportGenerator(std::chrono::seconds back = std::chrono::seconds(60))
      : boot_id_(CurrentBootId()) {
    const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    next_realtime_ = static_cast<std::uint64_t>(now.count()) -
                     static_cast<std::uint64_t>(back.count()) * 1000000;
  }

  void set_next_realtime_usec(std::uint64_t usec) { next_realtime_ = usec; }
  std::uint64_t next_realtime_usec() const { return next_realtime_; }

  // Appends one entry with `fields` (values may hold any bytes).
  void Add(const JournalFields& fields) {
    Field("__REALTIME_TIMESTAMP", std::to_string(next_realtime_));
    Field("__MONOTONIC_TIMESTAMP", std::to_string(next_monotonic_));
    Field("_BOOT_ID", boot_id_);
    Field("_HOSTNAME", "node-a");
    for (const auto& [k, v] : fields) Field(k, v);
    text_.push_back('\n');
    next_realtime_ += 1000;
    next_monotonic_ += 1000;
  }

  // A user-space entry with MESSAGE `message`.
  void AddMessage(const std::string& message, const std::string& identifier = "app",
                  const std::string& transport = "journal") {
    Add({{"_TRANSPORT", transport},
         {"PRIORITY", "6"},
         {"SYSLOG_IDENTIFIER", identifier},
         {"MESSAGE", message}});
  }

  // Takes the text built since the last call.
  std::string Take() { return std::exchange(text_, std::string()); }

 private:
  void Field(const std::string& key, const std::string& value) {
    bool plain = true;
    for (unsigned char c : value) {
      if (c == '\n' || c < 0x20 || c >= 0x7f) plain = false;
    }
    if (plain) {
      text_ += key + "=" + value + "\n";
      return;
    }
    // Binary form: KEY\n<le64 length><bytes>\n
    text_ += key + "\n";
    std::uint64_t n = value.size();
    for (int i = 0; i < 8; ++i) text_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
    text_ += value + "\n";
  }

  std::string boot_id_;
  std::uint64_t next_realtime_ = 0;
  std::uint64_t next_monotonic_ = 1'000'000;
  std::string text_;
};

// Runs systemd-journal-remote to write (or append) `export_text` into
// `journal_path` (must end in .journal). `scratch` is a file path for the
// export text. True on success.
inline bool WriteJournal(const std::string& journal_path, const std::string& export_text,
                         const std::string& scratch) {
  {
    std::ofstream out(scratch, std::ios::binary | std::ios::trunc);
    out.write(export_text.data(), static_cast<std::streamsize>(export_text.size()));
  }
  const std::string cmd = std::string(kJournalRemote) + " -o '" + journal_path + "' - < '" +
                          scratch + "' > '" + scratch + ".log' 2>&1";
  const int rc = std::system(cmd.c_str());  // NOLINT(cert-env33-c): a test helper, fixed paths
  return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

}  // namespace faultline
