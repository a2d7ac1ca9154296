// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/cri_parser.h"

#include <doctest/doctest.h>

#include "base/time_format.h"

namespace faultline {
namespace {

std::int64_t Nanos(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

TEST_CASE("a containerd line with a trimmed fraction and Z is parsed") {
  auto l = ParseCriLine("2026-11-22T07:02:53.17905Z stdout F CUDA error: illegal address");
  REQUIRE(l);
  CHECK(l->stream == CriStream::kStdout);
  CHECK_FALSE(l->partial);
  CHECK(l->content == "CUDA error: illegal address");
  CHECK(Nanos(l->time) == Nanos(*ParseRfc3339("2026-11-22T07:02:53.179050000Z")));
}

TEST_CASE("a CRI-O line with nine digits and +00:00 is parsed") {
  auto l = ParseCriLine("2026-11-22T07:02:53.178710000+00:00 stderr P chunk ");
  REQUIRE(l);
  CHECK(l->stream == CriStream::kStderr);
  CHECK(l->partial);
  CHECK(l->content == "chunk ");
  CHECK(Nanos(l->time) == Nanos(*ParseRfc3339("2026-11-22T07:02:53.17871Z")));
}

TEST_CASE("only the first colon-separated part of the tag counts") {
  auto l = ParseCriLine("2026-11-22T07:02:53Z stdout P:future:parts text");
  REQUIRE(l);
  CHECK(l->partial);
  CHECK(l->content == "text");
}

TEST_CASE("empty content is accepted with or without the separating space") {
  auto a = ParseCriLine("2026-11-22T07:02:53Z stdout F ");
  auto b = ParseCriLine("2026-11-22T07:02:53Z stdout F");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->content.empty());
  CHECK(b->content.empty());
}

TEST_CASE("lines that are not CRI are refused") {
  CHECK_FALSE(ParseCriLine(""));
  CHECK_FALSE(ParseCriLine("plain text from a non-CRI logger"));
  CHECK_FALSE(ParseCriLine("2026-11-22T07:02:53Z stdin F x"));
  CHECK_FALSE(ParseCriLine("2026-11-22T07:02:53Z stdout X x"));
  CHECK_FALSE(ParseCriLine("2026-13-22T07:02:53Z stdout F x"));
  CHECK_FALSE(ParseCriLine("2026-11-22T07:02:53Z stdout"));
}

CriLine Line(CriStream s, bool partial, std::string_view content, int sec = 0) {
  CriLine l;
  l.stream = s;
  l.partial = partial;
  l.content = content;
  l.time = std::chrono::system_clock::time_point(std::chrono::seconds(sec));
  return l;
}

TEST_CASE("P chunks are joined up to the F chunk of the same stream") {
  PartialLineJoiner j(1024);
  CHECK_FALSE(j.Add(Line(CriStream::kStdout, true, "abc", 1)));
  CHECK_FALSE(j.Add(Line(CriStream::kStdout, true, "def", 2)));
  CHECK(j.has_pending(CriStream::kStdout));
  auto done = j.Add(Line(CriStream::kStdout, false, "gh", 3));
  REQUIRE(done);
  CHECK(done->text == "abcdefgh");
  CHECK(done->time == std::chrono::system_clock::time_point(std::chrono::seconds(1)));
  CHECK_FALSE(done->truncated);
  CHECK_FALSE(j.has_pending(CriStream::kStdout));
}

TEST_CASE("stdout and stderr are joined independently when interleaved") {
  PartialLineJoiner j(1024);
  CHECK_FALSE(j.Add(Line(CriStream::kStdout, true, "out-1 ")));
  auto err = j.Add(Line(CriStream::kStderr, false, "err whole"));
  REQUIRE(err);
  CHECK(err->text == "err whole");
  CHECK(err->stream == CriStream::kStderr);
  auto out = j.Add(Line(CriStream::kStdout, false, "out-2"));
  REQUIRE(out);
  CHECK(out->text == "out-1 out-2");
}

TEST_CASE("a joined line longer than the cap is cut, marked and counted") {
  PartialLineJoiner j(5);
  CHECK_FALSE(j.Add(Line(CriStream::kStdout, true, "abcd")));
  CHECK_FALSE(j.Add(Line(CriStream::kStdout, true, "efgh")));
  auto done = j.Add(Line(CriStream::kStdout, false, "ijkl"));
  REQUIRE(done);
  CHECK(done->text == "abcde");
  CHECK(done->truncated);
  CHECK(j.truncated() == 1);
  auto next = j.Add(Line(CriStream::kStdout, false, "fine"));
  REQUIRE(next);
  CHECK_FALSE(next->truncated);
  CHECK(j.truncated() == 1);
}

TEST_CASE("a pending partial line can be flushed") {
  PartialLineJoiner j(64);
  CHECK_FALSE(j.Flush(CriStream::kStderr));
  CHECK_FALSE(j.Add(Line(CriStream::kStderr, true, "no newline at exit")));
  auto f = j.Flush(CriStream::kStderr);
  REQUIRE(f);
  CHECK(f->text == "no newline at exit");
  CHECK_FALSE(j.has_pending(CriStream::kStderr));
}

}  // namespace
}  // namespace faultline
