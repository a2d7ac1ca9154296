// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "base/vocabulary.h"

namespace faultline {

// The log formats `faultline scan` reads, recognised line by line.
enum class LineFormat {
  kPlain,         // anything else: the whole line, origin any
  kDmesg,         // "[ 1234.567890] msg" (dmesg): origin kernel
  kDmesgTime,     // "[Sun Nov 22 07:02:53 2026] msg" (dmesg -T): origin kernel
  kJournalShort,  // "Nov 22 07:02:53 host ident[pid]: msg" (journalctl -o short, short-iso,
                  // short-precise): origin kernel if ident is "kernel", else journal
  kJournalJson,   // journalctl -o json: origin kernel if _TRANSPORT=kernel, else journal
  kCri,           // "<rfc3339> stdout|stderr F|P msg" (CRI pod log): origin pod
};

std::string_view LineFormatName(LineFormat format);

// One input line, read as the record that rules see.
struct InputLine {
  LineFormat format = LineFormat::kPlain;
  std::string text;  // the message rules match: "IDENT: MESSAGE" for user-space journal entries
  Origin origin = Origin::kAny;
  std::optional<std::chrono::system_clock::time_point> time;  // when the line carries a wall time
  bool partial = false;  // CRI "P": the message continues on the stream's next line
  std::string stream;    // CRI: stdout or stderr
};

// Each parser is a pure function: nullopt when the line is not of its format.
// A trailing '\r' is ignored. dmesg -T times are read as UTC (dmesg prints
// local time; run it with TZ=UTC for exact log_time values).
std::optional<InputLine> ParseDmesgLine(std::string_view line);
std::optional<InputLine> ParseJournalShortLine(std::string_view line);
std::optional<InputLine> ParseJournalJsonLine(std::string_view line);
// A CRI pod-log line (base/cri_line.h's ParseCriLine) as an InputLine.
std::optional<InputLine> ParseCriInputLine(std::string_view line);

// Tries the formats above, cheapest test first; kPlain when none fits.
InputLine ParseInputLine(std::string_view line);
// The same into `out`, every member set, its strings' buffers reused: for
// a reader of many lines (`faultline scan`), no allocation per line.
void ParseInputLine(std::string_view line, InputLine& out);

}  // namespace faultline
