// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/cri_parser.h"

#include <utility>

namespace faultline {

void PartialLineJoiner::Append(JoinedLine& line, std::string_view content) {
  if (line.truncated) return;
  const std::size_t room = max_bytes_ > line.text.size() ? max_bytes_ - line.text.size() : 0;
  if (content.size() > room) {
    line.text.append(content.substr(0, room));
    line.truncated = true;
    ++truncated_;
    return;
  }
  line.text.append(content);
}

std::optional<JoinedLine> PartialLineJoiner::Add(const CriLine& line) {
  std::optional<JoinedLine>& pending = pending_[Index(line.stream)];
  if (!pending) {
    pending.emplace();
    pending->time = line.time;
    pending->stream = line.stream;
  }
  Append(*pending, line.content);
  if (line.partial) return std::nullopt;
  return std::exchange(pending, std::nullopt);
}

std::optional<JoinedLine> PartialLineJoiner::Flush(CriStream stream) {
  return std::exchange(pending_[Index(stream)], std::nullopt);
}

}  // namespace faultline
