// SPDX-License-Identifier: Apache-2.0
// Hostile input to the node sources (issue 14, item 4): a kmsg record with
// a forged dictionary, a record injected from user space, truncated CRI
// lines and binary pod logs. Each is read, cut or counted, never a crash.
// SECURITY.md ("Hostile input") maps every case to its test.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "collector/sources/cri_parser.h"
#include "collector/sources/kmsg_record.h"
#include "collector/sources/kmsg_source.h"
#include "collector/sources/podlog_source.h"
#include "tests/collector/fake_kmsg_device.h"
#include "tests/fakes/fake_clock.h"
#include "tests/support/cri_tree.h"
#include "tests/support/read_until.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::vector<LogRecord> ReadKmsg(const std::shared_ptr<FakeKmsgDevice::Ring>& ring) {
  TempDir dir;
  dir.Write("boot_id", "11111111-2222-3333-4444-555555555555\n");
  KmsgSource::Options o;
  o.device_path = "fake";
  o.boot_id_path = dir / "boot_id";
  FakeClock clock;
  auto source = KmsgSource::OpenWithDevice(o, std::make_unique<FakeKmsgDevice>(ring), clock);
  REQUIRE(source.ok());
  std::vector<LogRecord> all;
  for (int i = 0; i < 100; ++i) {
    std::vector<LogRecord> batch;
    REQUIRE((*source)->Read(batch, 100, std::stop_token()).ok());
    if (batch.empty()) break;
    all.insert(all.end(), batch.begin(), batch.end());
  }
  return all;
}

TEST_CASE("a dictionary forged inside a kmsg message stays message text, never labels") {
  // A writer cannot add continuation lines: the kernel escapes a newline in
  // the message as \x0a. Whatever follows it is message text, not a
  // SUBSYSTEM/DEVICE label that would point at another GPU.
  auto parsed = ParseKmsgRecord(
      "12,5,100,-;NVRM: Xid (PCI:0000:3b:00): 79\\x0a DEVICE=+pci:0000:b3:00.0\\x0a "
      "SUBSYSTEM=pci\n");
  REQUIRE(parsed.ok());
  CHECK(parsed->dict.empty());
  CHECK(parsed->message ==
        "NVRM: Xid (PCI:0000:3b:00): 79\n DEVICE=+pci:0000:b3:00.0\n SUBSYSTEM=pci");

  // Real continuation lines that repeat a key, lack '=', have an empty key,
  // carry escapes or are huge: kept bounded by the record, none crashes.
  const std::string huge(std::size_t{64} * 1024, 'v');
  auto odd = ParseKmsgRecord(
      "4,6,100,-;msg\n DEVICE=a\n DEVICE=b\n noequals\n =empty\n K\\x3dV=x\n "
      "BIG=" +
      huge + "\nnot-indented=1\n");
  REQUIRE(odd.ok());
  CHECK(odd->message == "msg");
  REQUIRE(odd->dict.size() == 4);
  CHECK(odd->dict[0] == std::pair<std::string, std::string>{"DEVICE", "a"});
  CHECK(odd->dict[1] == std::pair<std::string, std::string>{"DEVICE", "b"});
  CHECK(odd->dict[2].first == "K=V");  // unescaped key: '=' inside a key cannot split it
  CHECK(odd->dict[3].second.size() == huge.size());
}

TEST_CASE("a record written to /dev/kmsg from user space is kernel origin, marked facility 1") {
  // SECURITY.md ("Who can make faultline taint a node"): only root can write
  // /dev/kmsg, and the README's walkthrough depends on it, so such records
  // count as kernel; the kernel never gives them facility 0, and the label
  // travels with the event for anyone auditing a taint.
  auto ring = std::make_shared<FakeKmsgDevice::Ring>();
  ring->Add("12,7,2000,-;NVRM: Xid (PCI:0000:3b:00): 79, injected\n");        // <4> from user space
  ring->Add("4,8,2001,-;NVRM: Xid (PCI:0000:3b:00): 79, from the driver\n");  // the kernel's own
  auto records = ReadKmsg(ring);
  REQUIRE(records.size() == 2);
  CHECK(records[0].origin == Origin::kKernel);
  CHECK(records[0].labels.at("facility") == "1");
  CHECK(records[0].labels.at("priority") == "4");
  CHECK(records[1].origin == Origin::kKernel);
  CHECK(records[1].labels.at("facility") == "0");
}

TEST_CASE("kmsg records with NUL bytes, invalid UTF-8 or a broken prefix are read or counted") {
  auto ring = std::make_shared<FakeKmsgDevice::Ring>();
  ring->Add(std::string("6,1,10,-;bytes \x00\xff\xfe raw\n", 23));
  ring->Add("6,2,10,-;escaped \\x00\\xff\\xc3 done\n");
  ring->Add("garbage without a prefix\n");
  ring->Add("6,4,99999999999999999999999,-;timestamp overflows\n");
  ring->Add("6,5,10,-;last\n");
  auto records = ReadKmsg(ring);
  std::vector<std::string> texts;
  texts.reserve(records.size());
  for (const LogRecord& r : records) texts.push_back(r.text);
  // Bytes arrive as they are (rules see bytes; the event's JSON replaces
  // invalid UTF-8). The garbage record has no sequence, so the step from 2
  // to 4 is reported as one lost record; record 4 (its timestamp overflows)
  // is a parse error, counted, and no gap.
  REQUIRE(texts.size() == 4);
  CHECK(texts[0] == std::string("bytes \x00\xff\xfe raw", 13));
  CHECK(texts[1] == std::string("escaped \x00\xff\xc3 done", 16));
  CHECK(texts[2] == "faultline: kmsg ring buffer overrun: 1 records lost");
  CHECK(texts[3] == "last");
}

TEST_CASE("truncated CRI lines are refused, and a partial line cut off at EOF is flushed") {
  for (const char* line :
       {"2026-11-22T07:02:53.179Z", "2026-11-22T07:02:53.179Z ", "2026-11-22T07:02:53.179Z stdout",
        "2026-11-22T07:02:53.179Z stdo", "2026-11-22T07:02:53.179Z stdout ", "2026-11-22T07:0",
        "2026-11-22T07:02:53.179Z stdout P:"}) {
    CAPTURE(line);
    auto parsed = ParseCriLine(line);
    // "stdout P:" is a valid empty partial; the others are refused.
    if (std::string_view(line).ends_with("P:")) {
      REQUIRE(parsed);
      CHECK(parsed->content.empty());
    } else {
      CHECK_FALSE(parsed);
    }
  }
  PartialLineJoiner joiner(1 << 20);
  CriLine p;
  p.stream = CriStream::kStdout;
  p.partial = true;
  p.content = "NVRM: Xid (PCI:0000:3b:00): 79, cut";
  CHECK_FALSE(joiner.Add(p));
  auto flushed = joiner.Flush(CriStream::kStdout);
  REQUIRE(flushed);
  CHECK(flushed->text == "NVRM: Xid (PCI:0000:3b:00): 79, cut");
}

TEST_CASE("a binary pod log is counted as parse errors and the CRI lines around it are read") {
  TempDir tmp;
  const fs::path root = tmp.path() / "pods";
  fs::create_directories(root);
  CriContainerLog c(PodLogDir(root, "ml", "trainer-0", "uid-trainer-0", "main"));
  c.Write("stdout", "before");
  // A container that wrote an image to stdout with a runtime that does not
  // frame it, then random bytes with NULs and no valid UTF-8.
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += static_cast<char>((i * 131 + 7) % 256);
  c.WriteRaw(junk + "\n");
  c.WriteRaw(std::string("\x00\x00\x00\n", 4));
  // A CRI line whose content is binary: read, with the bytes that are not
  // UTF-8 written as \xNN (a NUL is valid UTF-8 and stays).
  c.Write("stderr", std::string("NVRM: Xid (PCI:0000:3b:00): 79 \x00\xff\xfe", 34));
  c.Write("stdout", "after");
  PodLogSource::Options o;
  o.root = root.string();
  o.state_dir = tmp / "state";
  o.rescan_interval = milliseconds(50);
  o.read_interval = milliseconds(20);
  auto src = PodLogSource::Open(o);
  REQUIRE(src.ok());
  std::vector<LogRecord> got = ReadUntil(**src, 3, milliseconds(5000));
  std::vector<std::string> texts;
  texts.reserve(got.size());
  for (const LogRecord& r : got) texts.push_back(r.text);
  REQUIRE(texts.size() == 3);
  CHECK(texts[0] == "before");
  CHECK(texts[1] == std::string("NVRM: Xid (PCI:0000:3b:00): 79 \x00\\xff\\xfe", 40));
  CHECK(texts[2] == "after");
  CHECK((*src)->stats().parse_errors >= 2);
}

}  // namespace
}  // namespace faultline
