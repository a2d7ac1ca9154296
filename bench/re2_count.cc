// SPDX-License-Identifier: Apache-2.0
// The ground truth of bench/sets_bench.sh: a reference scan with plain RE2,
// none of faultline's prefilter, literal keys or candidate logic. For each
// line of FILE and each RE2 pattern of PATTERNS (one per line, the enabled
// rules' patterns in `faultline rules list --format json` order), whether
// the pattern matches:
//
//   - on the raw line (what rg and Vectorscan see: their counts are checked
//     against these), and
//   - on the message faultline's rules see (ParseInputLine's `text`: the
//     line without its dmesg or journal prefix; faultline's per-rule counts
//     are checked against these). The two differ only for anchored
//     patterns on prefixed lines.
//
//   fl-re2-count PATTERNS FILE
//
// Output, one JSON object on stdout:
//   {"lines": N, "raw_lines": N, "raw": [N, ...],
//    "message_lines": N, "message": [N, ...]}
// where raw[i] / message[i] count the lines pattern i matches and *_lines
// the lines any pattern matches.
//
// One RE2::Set per semantics finds the patterns a line matches; a line on
// which the Set's DFA runs out of memory is matched pattern by pattern.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <re2/re2.h>
#include <re2/set.h>

#include "matcher/input_line.h"

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "fl-re2-count: %s\n", what.c_str());
  return 2;
}

class Matcher {
 public:
  explicit Matcher(const std::vector<std::string>& patterns)
      : set_(Options(), RE2::UNANCHORED), counts_(patterns.size(), 0) {
    for (const std::string& p : patterns) {
      one_.push_back(std::make_unique<RE2>(p, Options()));
    }
  }

  bool Build(std::string* why) {
    for (std::size_t i = 0; i < one_.size(); ++i) {
      if (!one_[i]->ok()) {
        *why = "pattern " + std::to_string(i + 1) + ": " + one_[i]->error();
        return false;
      }
      std::string error;
      if (set_.Add(one_[i]->pattern(), &error) < 0) {
        *why = "pattern " + std::to_string(i + 1) + ": " + error;
        return false;
      }
    }
    if (!set_.Compile()) {
      *why = "RE2::Set did not compile";
      return false;
    }
    return true;
  }

  void Count(std::string_view text) {
    hits_.clear();
    RE2::Set::ErrorInfo info{};
    const bool any = set_.Match(text, &hits_, &info);
    if (info.kind != RE2::Set::kNoError) {  // the DFA gave up: ask each pattern
      hits_.clear();
      for (std::size_t i = 0; i < one_.size(); ++i) {
        if (RE2::PartialMatch(text, *one_[i])) hits_.push_back(static_cast<int>(i));
      }
    } else if (!any) {
      return;
    }
    if (hits_.empty()) return;
    ++lines_;
    for (int i : hits_) ++counts_[static_cast<std::size_t>(i)];
  }

  void Print(const char* name) const {
    std::printf("\"%s_lines\": %llu, \"%s\": [", name, static_cast<unsigned long long>(lines_),
                name);
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      std::printf("%s%llu", i ? ", " : "", static_cast<unsigned long long>(counts_[i]));
    }
    std::printf("]");
  }

 private:
  static RE2::Options Options() {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(std::int64_t{1} << 30);  // the Set's DFA over dozens of patterns
    return o;
  }

  RE2::Set set_;
  std::vector<std::unique_ptr<RE2>> one_;
  std::vector<std::uint64_t> counts_;
  std::vector<int> hits_;
  std::uint64_t lines_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fl-re2-count PATTERNS FILE\n");
    return 2;
  }
  std::ifstream pin(argv[1]);
  if (!pin) return Fail(std::string("cannot read ") + argv[1]);
  std::vector<std::string> patterns;
  for (std::string line; std::getline(pin, line);) patterns.push_back(line);
  if (patterns.empty()) return Fail("no patterns");
  Matcher raw(patterns), message(patterns);
  std::string why;
  if (!raw.Build(&why) || !message.Build(&why)) return Fail(why);

  std::ifstream in(argv[2], std::ios::binary);
  if (!in) return Fail(std::string("cannot read ") + argv[2]);
  std::uint64_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    raw.Count(line);
    message.Count(faultline::ParseInputLine(line).text);
  }
  std::printf("{\"lines\": %llu, ", static_cast<unsigned long long>(lines));
  raw.Print("raw");
  std::printf(", ");
  message.Print("message");
  std::printf("}\n");
  return 0;
}
