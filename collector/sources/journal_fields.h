// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/log_record.h"

namespace faultline {

// The fields of one journal entry, as sd_journal_enumerate_data() returns
// them ("KEY=VALUE", where VALUE may hold any bytes, newlines and NULs
// included), plus the entry's __REALTIME_TIMESTAMP.
struct JournalEntry {
  std::map<std::string, std::string, std::less<>> fields;
  std::uint64_t realtime_usec = 0;
};

// Adds one "KEY=VALUE" datum to `entry`. A field that occurs again is kept
// once (its first value, as sd_journal_get_data does). False, and `entry`
// unchanged, if there is no '=' or the key is empty.
bool AddJournalField(std::string_view datum, JournalEntry& entry);

// Builds the record rules see. Pure.
//   text:   "SYSLOG_IDENTIFIER: MESSAGE" when there is an identifier, because
//           journald's kernel transport splits "NVRM: Xid (...): 79, ..." into
//           SYSLOG_IDENTIFIER=NVRM and MESSAGE="Xid (...): 79, ..."; else
//           MESSAGE. One trailing newline is dropped; bytes that are not
//           valid UTF-8 are written as \xNN (see EscapeInvalidUtf8).
//   origin: kKernel when _TRANSPORT=kernel, else kJournal.
//   labels: unit (_SYSTEMD_UNIT), identifier, pid (_PID), transport,
//           priority (PRIORITY), uid (_UID); each only when present. unit
//           and uid are fields journald adds itself (a client cannot forge
//           them): rules' `journal:` constraints check them.
//   time:   __REALTIME_TIMESTAMP.
//   source: "journal". The cursor is left empty for the caller to fill in.
LogRecord AssembleJournalRecord(const JournalEntry& entry);

// Returns `bytes` with every byte that is not part of a valid UTF-8
// sequence replaced by the four characters \xNN (the kernel's own escape),
// so that the text can go into JSON events and RE2 sees stable input.
// Valid UTF-8 (and so plain ASCII) is returned unchanged. Pure; used by the
// podlog source as well.
std::string EscapeInvalidUtf8(std::string_view bytes);

}  // namespace faultline
