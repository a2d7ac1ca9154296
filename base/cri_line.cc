// SPDX-License-Identifier: Apache-2.0
#include "base/cri_line.h"

#include "base/time_format.h"

namespace faultline {
namespace {

// Splits off the text before the next space; `rest` is what follows that
// space. False if there is no space.
bool NextField(std::string_view& rest, std::string_view& field) {
  const std::size_t sp = rest.find(' ');
  if (sp == std::string_view::npos) return false;
  field = rest.substr(0, sp);
  rest.remove_prefix(sp + 1);
  return true;
}

}  // namespace

std::string_view CriStreamName(CriStream stream) {
  return stream == CriStream::kStdout ? "stdout" : "stderr";
}

std::optional<CriLine> ParseCriLine(std::string_view line) {
  std::string_view rest = line;
  std::string_view ts;
  std::string_view stream;
  if (!NextField(rest, ts) || !NextField(rest, stream)) return std::nullopt;

  // The tag is the last fixed field. An empty content may come without the
  // separating space ("... stdout F"), so accept the end of the line too.
  std::string_view tag;
  if (!NextField(rest, tag)) {
    tag = rest;
    rest = {};
  }
  // Only the first ":"-separated part of the tag has a meaning today.
  tag = tag.substr(0, tag.find(':'));

  CriLine out;
  if (stream == "stdout") {
    out.stream = CriStream::kStdout;
  } else if (stream == "stderr") {
    out.stream = CriStream::kStderr;
  } else {
    return std::nullopt;
  }
  if (tag == "F") {
    out.partial = false;
  } else if (tag == "P") {
    out.partial = true;
  } else {
    return std::nullopt;
  }
  std::optional<std::chrono::system_clock::time_point> t = ParseRfc3339(ts);
  if (!t) return std::nullopt;
  out.time = *t;
  out.content = rest;
  return out;
}

}  // namespace faultline
