// SPDX-License-Identifier: Apache-2.0
// ASCII letters and their case, as the matcher's caseless literals compare
// them: RE2's (?i) folds A-Z with a-z; every other byte only matches itself
// here (where RE2 folds more, as k and s, the callers say so).
#pragma once

namespace faultline {

inline bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

inline char AsciiUpper(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - ('a' - 'A')) : c;
}

}  // namespace faultline
