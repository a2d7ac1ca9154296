// SPDX-License-Identifier: Apache-2.0
// The Vectorscan peer of `faultline scan` in bench/scan_bench.sh: compiles
// the patterns that `faultline rules list --format ere` exports into one
// Vectorscan (Hyperscan) database and counts, per pattern, the lines it
// matches in a file, and the lines any pattern matches (like `rg -c -f`).
//
//   fl-hs-count block|stream PATTERNS FILE
//
// block:  one hs_scan over the whole file, mapped as faultline maps it.
// stream: the same mapping fed to one stream in 256 KiB writes (the size
//         of faultline's own scan chunks, which keeps each in the L2 cache).
//
// Output, one JSON object on stdout:
//   {"mode": "block", "lines": N, "per_pattern": [N, ...], "skipped": [i, ...]}
// where per_pattern[i] is the count for line i of PATTERNS (0 for a skipped
// pattern, one Vectorscan refused).
//
// Line semantics: the patterns are matched with HS_FLAG_MULTILINE (^ and $
// at line boundaries) and rewritten so that no match can cross a newline
// (a negated bracket also excludes '\n', [:space:] becomes the blanks
// without '\n'), as grep and rg match line by line. A match is counted on
// the line holding its last byte, once per line and pattern.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <hs/hs.h>

namespace {

// ERE (as exported) to a Vectorscan pattern that stays within one line.
std::string OneLine(const std::string& ere) {
  std::string out;
  bool in_bracket = false;
  for (std::size_t i = 0; i < ere.size(); ++i) {
    char c = ere[i];
    if (!in_bracket) {
      if (c == '\\' && i + 1 < ere.size()) {
        out += c;
        out += ere[++i];
        continue;
      }
      if (c == '[') {
        in_bracket = true;
        out += c;
        if (i + 1 < ere.size() && ere[i + 1] == '^') {
          out += "^\\n";
          ++i;
        }
        if (i + 1 < ere.size() && ere[i + 1] == ']') {  // a leading ']' is literal
          out += "\\]";
          ++i;
        }
        continue;
      }
      out += c;
      continue;
    }
    if (ere.compare(i, 9, "[:space:]") == 0) {
      out += " \\t\\r\\f\\x0b";  // not \\v: in PCRE syntax that is any vertical space, \\n too
      i += 8;
      continue;
    }
    if (c == '[' && i + 1 < ere.size() && ere[i + 1] == ':') {
      std::size_t close = ere.find(":]", i + 2);
      if (close != std::string::npos) {
        out.append(ere, i, close + 2 - i);
        i = close + 1;
        continue;
      }
    }
    if (c == ']') in_bracket = false;
    out += c;
  }
  return out;
}

// Vectorscan refuses a '$' that more pattern follows ("(,|$)(x)?"): such
// a '$' becomes '\n', which ends the same lines (the corpus ends in a
// newline), and the match is still counted on the line of its last byte.
std::string EmbeddedEndsAsNewlines(const std::string& p) {
  std::string out;
  bool in_bracket = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      out += c;
      out += p[++i];
      continue;
    }
    if (c == '[' && !in_bracket) {
      in_bracket = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_bracket && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const std::size_t close = p.find(":]", i + 2);
      if (close != std::string::npos) {
        out.append(p, i, close + 2 - i);
        i = close + 1;
        continue;
      }
    }
    if (in_bracket && c == ']') in_bracket = false;
    out += !in_bracket && c == '$' && i + 1 < p.size() ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

struct Counts {
  const char* base;
  std::size_t size;
  std::vector<std::size_t> last_line_end;  // per pattern; SIZE_MAX = none
  std::vector<std::uint64_t> per_pattern;
  std::vector<std::size_t> any;  // line ends of every counted (pattern, line)
};

int OnMatch(unsigned id, unsigned long long /*from*/, unsigned long long to, unsigned /*flags*/,
            void* ctx) {
  auto* c = static_cast<Counts*>(ctx);
  // The line of the match's last byte (of the position before `to`: an
  // empty match at a line start is on the line before; none here is empty).
  const std::size_t at = to > 0 ? static_cast<std::size_t>(to) - 1 : 0;
  const void* nl = std::memchr(c->base + at, '\n', c->size - at);
  const std::size_t line_end =
      nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - c->base) : c->size;
  if (c->last_line_end[id] == line_end) return 0;
  c->last_line_end[id] = line_end;
  ++c->per_pattern[id];
  c->any.push_back(line_end);
  return 0;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "fl-hs-count: %s\n", what.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[1], "block") != 0 && std::strcmp(argv[1], "stream") != 0)) {
    std::fprintf(stderr, "usage: fl-hs-count block|stream PATTERNS FILE\n");
    return 2;
  }
  const bool stream = std::strcmp(argv[1], "stream") == 0;
  std::ifstream in(argv[2]);
  if (!in) return Fail(std::string("cannot read ") + argv[2]);
  std::vector<std::string> patterns;
  for (std::string line; std::getline(in, line);) patterns.push_back(OneLine(line));

  // Compile each pattern alone first so that one Vectorscan refuses is
  // skipped (and reported) rather than failing the whole database.
  const unsigned mode = stream ? HS_MODE_STREAM : HS_MODE_BLOCK;
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  std::vector<unsigned> skipped;
  for (unsigned i = 0; i < patterns.size(); ++i) {
    hs_database_t* one = nullptr;
    hs_compile_error_t* error = nullptr;
    auto compile = [&] {
      return hs_compile(patterns[i].c_str(), HS_FLAG_MULTILINE, mode, nullptr, &one, &error);
    };
    hs_error_t rc = compile();
    if (rc != HS_SUCCESS && error && error->message &&
        std::strstr(error->message, "Embedded end anchors")) {
      hs_free_compile_error(error);
      error = nullptr;
      patterns[i] = EmbeddedEndsAsNewlines(patterns[i]);
      rc = compile();
    }
    if (rc != HS_SUCCESS) {
      std::fprintf(stderr, "fl-hs-count: skipped pattern %u: %s\n", i + 1,
                   error && error->message ? error->message : "?");
      hs_free_compile_error(error);
      skipped.push_back(i);
      continue;
    }
    hs_free_database(one);
    exprs.push_back(patterns[i].c_str());
    flags.push_back(HS_FLAG_MULTILINE);
    ids.push_back(i);
  }
  if (exprs.empty()) return Fail("no pattern compiled");
  hs_database_t* db = nullptr;
  hs_compile_error_t* error = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()),
                       mode, nullptr, &db, &error) != HS_SUCCESS) {
    std::string why = error && error->message ? error->message : "?";
    hs_free_compile_error(error);
    return Fail("compile: " + why);
  }
  hs_scratch_t* scratch = nullptr;
  if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) return Fail("no scratch");

  // Mapped as faultline's FileBuffer maps a regular file.
  int fd = open(argv[3], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(std::string("cannot open ") + argv[3]);
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size <= 0) return Fail("empty or unreadable file");
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) return Fail("mmap failed");
  madvise(m, size, MADV_SEQUENTIAL);
  madvise(m, size, MADV_WILLNEED);
  close(fd);

  Counts c{static_cast<const char*>(m),
           size,
           std::vector<std::size_t>(patterns.size(), SIZE_MAX),
           std::vector<std::uint64_t>(patterns.size(), 0),
           {}};
  if (!stream) {
    if (size > 0xffffffffu) return Fail("file too large for one block scan");
    if (hs_scan(db, c.base, static_cast<unsigned>(size), 0, scratch, &OnMatch, &c) != HS_SUCCESS) {
      return Fail("scan failed");
    }
  } else {
    hs_stream_t* s = nullptr;
    if (hs_open_stream(db, 0, &s) != HS_SUCCESS) return Fail("cannot open stream");
    constexpr std::size_t kWrite = std::size_t{256} << 10;
    for (std::size_t off = 0; off < size; off += kWrite) {
      const unsigned len = static_cast<unsigned>(std::min(kWrite, size - off));
      if (hs_scan_stream(s, c.base + off, len, 0, scratch, &OnMatch, &c) != HS_SUCCESS) {
        return Fail("stream scan failed");
      }
    }
    if (hs_close_stream(s, scratch, &OnMatch, &c) != HS_SUCCESS) return Fail("close failed");
  }
  std::sort(c.any.begin(), c.any.end());
  const std::size_t lines =
      static_cast<std::size_t>(std::unique(c.any.begin(), c.any.end()) - c.any.begin());

  std::printf("{\"mode\": \"%s\", \"lines\": %zu, \"per_pattern\": [", argv[1], lines);
  for (std::size_t i = 0; i < c.per_pattern.size(); ++i) {
    std::printf("%s%llu", i ? ", " : "", static_cast<unsigned long long>(c.per_pattern[i]));
  }
  std::printf("], \"skipped\": [");
  for (std::size_t i = 0; i < skipped.size(); ++i) std::printf("%s%u", i ? ", " : "", skipped[i]);
  std::printf("]}\n");
  hs_free_scratch(scratch);
  hs_free_database(db);
  munmap(m, size);
  return 0;
}
