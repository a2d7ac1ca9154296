// SPDX-License-Identifier: Apache-2.0
// The byte layout shared by the build-time snapshots (rule_snapshot.h,
// literal_snapshot.h): little helpers that append numbers and strings, and a
// reader that never reads past its input. The snapshots are written and read
// by the same build, so the layout is the host's (no byte swapping).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace faultline {

class ByteWriter {
 public:
  std::string out;

  void U32(std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I64(std::int64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Bool(bool v) { out.push_back(v ? '\1' : '\0'); }
  void Str(std::string_view s) {
    U32(static_cast<std::uint32_t>(s.size()));
    out.append(s);
  }
};

// Reads what ByteWriter wrote. Any read past the end, or a value out of its
// range, clears ok() for good; later reads then return zero values, so a
// caller checks ok() (or done()) once at the end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == in_.size(); }
  void Fail() { ok_ = false; }

  std::uint32_t U32() {
    std::uint32_t v = 0;
    Raw(&v, sizeof v);
    return v;
  }
  std::int64_t I64() {
    std::int64_t v = 0;
    Raw(&v, sizeof v);
    return v;
  }
  bool Bool() {
    std::uint8_t v = 0;
    Raw(&v, 1);
    if (v > 1) ok_ = false;
    return v == 1;
  }
  std::string Str() { return std::string(StrView()); }
  // Str without a copy: a view into the input.
  std::string_view StrView() {
    const std::uint32_t n = U32();
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return {};
    }
    const std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // A count of items that each take at least one byte: never more than
  // the bytes left (a corrupt count must not reserve gigabytes).
  std::uint32_t Count() {
    const std::uint32_t n = U32();
    if (n > in_.size() - pos_) ok_ = false;
    return ok_ ? n : 0;
  }

 private:
  void Raw(void* to, std::size_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return;
    }
    std::memcpy(to, in_.data() + pos_, n);
    pos_ += n;
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace faultline
