// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace faultline {

// Writers of JSON text straight into a string, for the hot output paths (an
// event per fault line in `faultline scan`, per produced Kafka message in the
// agent) where building an nlohmann::json first cost ~100,000 instructions
// per event.
//
// The bytes are exactly those of nlohmann::json::dump(-1, ' ', false,
// error_handler_t::replace) of the same value, so the wire form did not
// change: `"`, `\` and the control characters escaped as nlohmann does
// (\b \t \n \f \r, others as \u00xx), non-ASCII copied as is, and each
// invalid UTF-8 sequence (its maximal valid prefix, or one byte) replaced by
// U+FFFD. tests/base/json_text_test.cc compares them on random bytes.

// Length of the maximal prefix of a UTF-8 sequence at the start of `text`
// (RFC 3629 ranges: no overlong forms, no surrogates, nothing above
// U+10FFFF), and whether it is a whole character. A lead byte that can start
// no sequence (and an ASCII byte: ask only for bytes >= 0x80) has a prefix
// of 0. This is where nlohmann's decoder rejects.
struct Utf8Prefix {
  std::size_t length;
  bool complete;
};

Utf8Prefix ScanUtf8(std::string_view text);

// Appends `text` as a JSON string, quotes included.
void AppendJsonString(std::string& out, std::string_view text);

// The most bytes a JSON string of `size` bytes of text takes: its quotes and
// 6 per byte (a control byte's \u00xx; an invalid byte's U+FFFD is 3).
constexpr std::size_t JsonStringBound(std::size_t size) { return 6 * size + 2; }
// AppendJsonString's bytes written at `p`, which has room for
// JsonStringBound(text.size()) of them; returns the end of what it wrote.
// For a writer that reserves room for many pieces at once.
char* WriteJsonString(char* p, std::string_view text);

// Appends a decimal number as nlohmann writes one.
void AppendJsonNumber(std::string& out, std::uint64_t value);
void AppendJsonNumber(std::string& out, std::int64_t value);

}  // namespace faultline
