// SPDX-License-Identifier: Apache-2.0
// The input of the fuzzers that take a pattern and a text: the first line
// an RE2 pattern, compiled small (many executions), the rest the text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include <re2/re2.h>

namespace faultline {

struct PatternInput {
  std::string_view pattern;
  std::string_view text;  // after the pattern's line
  std::unique_ptr<RE2> re;
};

// Nullopt when there is no second line or RE2 refuses the pattern.
inline std::optional<PatternInput> ReadPatternInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = input.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  PatternInput in{input.substr(0, nl), input.substr(nl + 1), nullptr};
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);  // small programs: many executions
  in.re = std::make_unique<RE2>(re2::StringPiece(in.pattern.data(), in.pattern.size()), options);
  if (!in.re->ok()) return std::nullopt;
  return in;
}

}  // namespace faultline
