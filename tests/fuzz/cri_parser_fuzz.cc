// SPDX-License-Identifier: Apache-2.0
// ParseCriLine and PartialLineJoiner on arbitrary bytes: each input line is
// parsed and fed to a small-capped joiner; joined lines must respect the cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "collector/sources/cri_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  faultline::PartialLineJoiner joiner(64);
  while (!input.empty()) {
    const std::size_t nl = input.find('\n');
    const std::string_view line = input.substr(0, nl);
    input.remove_prefix(nl == std::string_view::npos ? input.size() : nl + 1);
    std::optional<faultline::CriLine> cri = faultline::ParseCriLine(line);
    if (!cri) continue;
    if (cri->content.size() > line.size()) std::abort();
    if (std::optional<faultline::JoinedLine> joined = joiner.Add(*cri)) {
      if (joined->text.size() > 64) std::abort();
    }
  }
  for (auto s : {faultline::CriStream::kStdout, faultline::CriStream::kStderr}) {
    if (auto rest = joiner.Flush(s); rest && rest->text.size() > 64) std::abort();
  }
  return 0;
}
