// SPDX-License-Identifier: Apache-2.0
// `faultline scan` and `faultline rules check|list`, called in-process.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/fault_event.h"
#include "matcher/cli_commands.h"
#include "tests/support/temp_dir.h"

namespace faultline {
namespace {

struct Run {
  int status;
  std::string out, err;
};

Run Scan(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = RunScanCommand(args, out, err);
  return {status, out.str(), err.str()};
}

Run Rules(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int status = RunRulesCommand(args, out, err);
  return {status, out.str(), err.str()};
}

std::vector<nlohmann::json> Events(const std::string& out) {
  std::vector<nlohmann::json> events;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) events.push_back(nlohmann::json::parse(line));
  return events;
}

const char* const kPack = R"(pack: t
version: 1
rules:
  - id: t.xid
    sources: [kernel]
    pattern: 'NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>\d+)'
    summary: 'Xid {xid}'
    classify:
      capture: xid
      values:
        "79": {action: taint, severity: critical}
      default: {action: event}
    tests:
      match: ['NVRM: Xid (PCI:0000:3b:00): 79, x']
      no_match: ['NVRM: Xid']
  - id: t.nccl
    sources: [pod]
    pattern: 'NCCL WARN (?P<what>.+)'
    tests:
      match: ['NCCL WARN x']
      no_match: ['NCCL INFO x']
)";

TEST_CASE("scan of the sample node log with the built-in packs finds the Xids with their outcome") {
  Run r = Scan({FL_SOURCE_DIR "/tests/data/sample-node.log"});
  CHECK(r.status == 0);
  std::map<int, std::vector<nlohmann::json>> by_line;
  for (const auto& e : Events(r.out)) by_line[e["line"].get<int>()].push_back(e);
  auto xid_at = [&](int line) -> nlohmann::json {
    for (const auto& e : by_line[line]) {
      if (e["rule"] == "nvidia.xid") return e;
    }
    return nullptr;
  };
  REQUIRE(xid_at(16) != nullptr);
  CHECK(xid_at(16)["fields"]["xid"] == "79");
  CHECK(xid_at(16)["action"] == "taint");
  CHECK(xid_at(16)["severity"] == "critical");
  CHECK(xid_at(16)["origin"] == "kernel");
  CHECK(xid_at(16)["message"] ==
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1912, name=nvidia-smi, GPU has fallen off the bus.");
  REQUIRE(xid_at(9) != nullptr);
  CHECK(xid_at(9)["fields"]["xid"] == "13");
  CHECK(xid_at(9)["action"] == "event");
  CHECK(xid_at(10) != nullptr);
  CHECK_FALSE(by_line[12].empty());  // the mlx5 link down
  // Noise lines match nothing.
  for (int noise : {1, 2, 3, 5, 8, 11, 14, 15, 18}) CHECK_MESSAGE(by_line[noise].empty(), noise);
  for (const auto& [line, events] : by_line) {
    for (const auto& e : events) {
      for (const char* key : {"file", "line", "rule", "pack", "category", "severity", "action",
                              "summary", "fields", "message"}) {
        CHECK_MESSAGE(e.contains(key), key);
      }
    }
  }
}

TEST_CASE(
    "scan joins CRI partial lines, reports pods as origin pod, and keeps kernel rules off them") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  Run r = Scan({"--no-builtin", "--rules", pack, FL_SOURCE_DIR "/tests/data/sample-pod.log"});
  CHECK(r.status == 0);
  auto events = Events(r.out);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["rule"] == "t.nccl");
  CHECK(events[0]["line"] == 3);
  CHECK(events[0]["origin"] == "pod");
  CHECK(events[0]["log_time"] == "2026-11-22T07:02:54.200000Z");
  CHECK(events[0]["fields"]["what"].get<std::string>().find("hca mlx5_0") != std::string::npos);
  // --source any applies every rule: the Xid printed by the pod now matches too.
  Run any = Scan({"--no-builtin", "--rules", pack, "--source", "any",
                  std::string(FL_SOURCE_DIR) + "/tests/data/sample-pod.log"});
  CHECK(Events(any.out).size() == 2);
}

// Records are matched through the literal prefilter, one record at a time
// (the joined CRI message, the decoded journal MESSAGE), not line by line of
// the file: a literal cut by a CRI partial, or on a journal message's second
// line, is still found.
TEST_CASE(
    "scan finds a rule whose literal a CRI partial cut in two, and one on a journal "
    "message's second line") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  std::string cri = dir.Write("pod.log",
                              "2026-11-22T07:02:54.1Z stderr F step 1 loss 2.3\n"
                              "2026-11-22T07:02:54.2Z stderr P train-0:1:2 [3] NCCL WA\n"
                              "2026-11-22T07:02:54.2Z stdout F NCCL INFO other stream\n"
                              "2026-11-22T07:02:54.2Z stderr F RN timeout on rank 3\n"
                              "2026-11-22T07:02:54.3Z stderr F NCCL WARN whole\n");
  auto pod = Events(Scan({"--no-builtin", "--rules", pack, cri}).out);
  REQUIRE(pod.size() == 2);
  CHECK(pod[0]["line"] == 2);
  CHECK(pod[0]["fields"]["what"] == "timeout on rank 3");
  CHECK(pod[1]["line"] == 5);
  std::string journal = dir.Write(
      "j.json",
      R"({"_TRANSPORT":"kernel","MESSAGE":"first line\nNVRM: Xid (PCI:0000:3b:00): 79, x"})"
      "\n"
      R"({"_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 13, y"})"
      "\n");
  auto kernel = Events(Scan({"--no-builtin", "--rules", pack, journal}).out);
  REQUIRE(kernel.size() == 2);
  CHECK(kernel[0]["fields"]["xid"] == "79");
  CHECK(kernel[1]["fields"]["xid"] == "13");
}

// A CRI file without partial lines is scanned raw (the prefilter over the
// buffer, candidate lines parsed); one with a partial is read record by
// record. Both must print the same events for the same lines (the id
// differs: it holds the file name).
TEST_CASE("scan of CRI lines prints the same events whether the file has partial lines or not") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  std::string lines;
  for (int i = 0; i < 300; ++i) {
    const std::string t = "2026-11-22T07:02:" + std::to_string(10 + i % 40) + ".5Z ";
    lines += t + "stdout F step " + std::to_string(i) + " loss 2.3\n";
    if (i % 7 == 0) {
      lines += t + "stderr F host:1:2 [3] NCCL WARN timeout " + std::to_string(i) + "\n";
    }
    if (i % 11 == 0) lines += t + "stdout F NVRM: Xid (PCI:0000:3b:00): 79, printed by a pod\n";
  }
  const std::string partial_tail =
      "2026-11-22T07:03:00Z stderr P host:1:2 [3] NCCL WA\n2026-11-22T07:03:00Z stderr F RN end\n";
  auto raw = Events(Scan({"--no-builtin", "--rules", pack, dir.Write("raw.log", lines)}).out);
  auto records = Events(
      Scan({"--no-builtin", "--rules", pack, dir.Write("rec.log", lines + partial_tail)}).out);
  REQUIRE(raw.size() == 43);  // the NCCL WARN lines; the Xid is a kernel rule, off pod lines
  REQUIRE(records.size() == raw.size() + 1);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    for (const char* key : {"line", "rule", "origin", "fields", "message", "log_time"}) {
      CHECK_MESSAGE(raw[i][key] == records[i][key], key);
    }
  }
  CHECK(raw[0]["origin"] == "pod");
  CHECK(raw[0]["log_time"] == "2026-11-22T07:02:10.500000Z");
  CHECK(records.back()["fields"]["what"] == "end");
  // --source any: the pod's Xid line matches the kernel rule too, on both paths.
  auto raw_any = Events(
      Scan({"--no-builtin", "--rules", pack, "--source", "any", dir.Write("raw2.log", lines)}).out);
  CHECK(raw_any.size() == 43 + 28);
}

// A stream (stdin, a FIFO, `<(journalctl ...)`) is read in blocks of whole
// lines of about 64 MiB, not whole (a week of a node's journal piped in was
// gigabytes of memory). A CRI record joined from partial lines may span two
// blocks, and line numbers go on across them.
TEST_CASE("scan of a stream: a CRI record across two 64 MiB blocks, line numbers across blocks") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  const std::string fifo = dir / "pod.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string full = "2026-11-22T07:02:54.2Z stdout F step 7 loss 2.3\n";
  const std::string part = "2026-11-22T07:02:54.2Z stderr P x\n";
  std::string data;
  std::uint64_t lines = 0;
  while (data.size() < (std::size_t{63} << 20)) data += full, ++lines;
  // A record of partials from 63 MiB to past 65: where the first block ends
  // (at a newline past 64 MiB less a line, or up to 1 MiB more), it is open.
  const std::uint64_t record_line = lines + 1;
  data += "2026-11-22T07:02:54.2Z stderr P host:1:2 [3] NCCL WA\n";
  data += "2026-11-22T07:02:54.2Z stderr P RN \n";
  lines += 2;
  std::size_t xs = 0;
  while (data.size() < (std::size_t{65} << 20) + 100000) data += part, ++lines, ++xs;
  data += "2026-11-22T07:02:54.2Z stderr F end\n";
  ++lines;
  for (int i = 0; i < 1000; ++i) data += full, ++lines;
  data += "2026-11-22T07:02:55Z stderr F host:1:2 [3] NCCL WARN last\n";
  const std::uint64_t last_line = ++lines;
  std::thread writer([&] {
    const int fd = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    for (std::size_t at = 0; at < data.size();) {
      const ssize_t n = write(fd, data.data() + at, data.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    close(fd);
  });
  Run r = Scan({"--no-builtin", "--rules", pack, fifo});
  writer.join();
  CHECK(r.status == 0);
  auto events = Events(r.out);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["line"] == record_line);
  // The record joined across the blocks: its literal was cut, its text is whole.
  const std::string what = events[0]["fields"]["what"];
  CHECK(what.rfind("xxxxxxxx", 0) == 0);
  CHECK(events[0]["message"].get<std::string>().rfind("host:1:2 [3] NCCL WARN xxxx", 0) == 0);
  CHECK(xs > 60000);
  CHECK(events[1]["line"] == last_line);
  CHECK(events[1]["fields"]["what"] == "last");
}

TEST_CASE("scan reads journalctl -o json and rebuilds IDENT: MESSAGE") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  std::string log = dir.Write(
      "j.json",
      R"({"_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, x","__REALTIME_TIMESTAMP":"1795330973000000"})"
      "\n"
      R"({"_TRANSPORT":"syslog","SYSLOG_IDENTIFIER":"evil","MESSAGE":"NVRM: Xid (PCI:0000:3b:00): 79, x"})"
      "\n");
  Run r = Scan({"--no-builtin", "--rules", pack, log});
  auto events = Events(r.out);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["line"] == 1);
  CHECK(events[0]["action"] == "taint");
  CHECK(events[0]["log_time"] == "2026-11-22T07:02:53.000000Z");
}

TEST_CASE("scan prints the agent's event for a line: same id on a re-scan, node from --node") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  std::string log = dir.Write("k.log", "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, x\n");
  auto first = Events(Scan({"--no-builtin", "--rules", pack, "--node", "gpu-9", log}).out);
  auto again = Events(Scan({"--no-builtin", "--rules", pack, "--node", "gpu-9", log}).out);
  REQUIRE(first.size() == 1);
  REQUIRE(again.size() == 1);
  const nlohmann::json& e = first[0];
  CHECK(e["schema"] == FaultEvent::kSchemaVersion);
  CHECK(e["node"] == "gpu-9");
  CHECK(e["source"] == "file");
  CHECK(e["labels"]["file"] == log);
  CHECK(e["labels"]["line"] == "1");
  CHECK(e["id"].get<std::string>().size() == 32);
  CHECK(e["id"] == again[0]["id"]);  // a re-scan is recognised downstream
  CHECK(e["suppressed"] == 0);
  // dmesg's monotonic stamp is no wall time: log_time is when it was read.
  CHECK(e["log_time"] == e["detected_time"]);
  // The event parses back as the tainter reads it from Kafka.
  Result<FaultEvent> parsed = ParseFaultEvent(e.dump());
  REQUIRE(parsed.ok());
  CHECK(parsed->rule == "t.xid");
  CHECK(parsed->action == Action::kTaint);
  auto other = Events(Scan({"--no-builtin", "--rules", pack, "--node", "gpu-8", log}).out);
  CHECK(other[0]["id"] != e["id"]);
}

TEST_CASE("scan --fail-on taint exits 1 when a taint is found, plain scans exit 0") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  std::string log = dir.Write("k.log", "[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, x\n");
  CHECK(Scan({"--no-builtin", "--rules", pack, log}).status == 0);
  CHECK(Scan({"--no-builtin", "--rules", pack, "--fail-on", "taint", log}).status == 1);
  CHECK(Scan({"--no-builtin", "--rules", pack, "--bogus"}).status == 2);
  CHECK(Scan({"--no-builtin", "--rules", pack, "/nonexistent.log"}).status == 2);
  Run text = Scan({"--no-builtin", "--rules", pack, "--format", "text", "--node", "n1", log});
  CHECK(text.out.find(":1: critical taint [t.xid] Xid 79") != std::string::npos);
}

TEST_CASE("rules check exit codes: 0 clean, 1 failing test, 2 invalid pack or bad usage") {
  TempDir dir;
  CHECK(Rules({"check", "--no-builtin", dir.Write("ok.yaml", kPack)}).status == 0);
  std::string failing = kPack;
  failing.replace(failing.find("no_match: ['NVRM: Xid']"), 23, "no_match: ['NVRM: Xid (0): 1']");
  TempDir dir2;
  Run t = Rules({"check", "--no-builtin", dir2.Write("t.yaml", failing)});
  CHECK(t.status == 1);
  CHECK(t.out.find("[T003]") != std::string::npos);
  TempDir dir3;
  Run bad = Rules(
      {"check", "--no-builtin", "--format", "json",
       dir3.Write(
           "b.yaml",
           "pack: b\nversion: 1\nrules:\n  - id: x\n    sources: [kernel]\n    pattern: '('\n")});
  CHECK(bad.status == 2);
  auto j = nlohmann::json::parse(bad.out);
  CHECK(j["diagnostics"][0]["code"] == "E104");
  CHECK(j["diagnostics"][0]["line"] == 6);
  CHECK(Rules({"check", "--no-builtin"}).status == 2);
  CHECK(Rules({"frobnicate"}).status == 2);
  // --werror: the W201 of a rule without tests fails the check.
  TempDir dir4;
  std::string untested = dir4.Write("u.yaml",
                                    "pack: u\nversion: 1\nrules:\n  - id: u\n    sources: "
                                    "[kernel]\n    pattern: 'hello world'\n");
  CHECK(Rules({"check", "--no-builtin", untested}).status == 0);
  CHECK(Rules({"check", "--no-builtin", "--werror", untested}).status == 2);
}

TEST_CASE("rules list --format ere prints patterns grep -E reads, json shows the prefilter") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", kPack);
  Run ere = Rules({"list", "--no-builtin", "--format", "ere", pack});
  CHECK(ere.status == 0);
  CHECK(ere.out == "NVRM: Xid \\((PCI:)?([0-9a-fA-F:.]+)\\): ([0-9]+)\nNCCL WARN (.+)\n");
  Run json = Rules({"list", "--no-builtin", "--format", "json", pack});
  auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["id"] == "t.xid");
  CHECK(j[0]["prefilter"].size() == 1);
  Run text = Rules({"list", "--no-builtin", pack});
  CHECK(text.out.find("t.nccl") != std::string::npos);
}

// The exact bytes of `faultline scan --format json` for a matched line, with
// captures (fields, a classified outcome, a threshold, an expire) and
// without: its serialization is written by hand for speed, and this pins it
// so that no change to that code can alter a byte unnoticed. Only the run's
// own detected_time and the temporary file's path (in "file", the id and
// the labels) are filled in.
TEST_CASE("scan prints a matched line's JSON byte for byte, with captures and without") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", R"(pack: pin
version: 1
rules:
  - id: pin.xid
    sources: [kernel]
    category: hardware
    pattern: 'NVRM: Xid \(PCI:(?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+)(?:, (?P<unused>zzz))?'
    summary: 'Xid {xid} on {pci} "quoted"'
    threshold: {count: 2, window: 10m, key: [pci]}
    expire: 1h
    classify:
      capture: xid
      values:
        "79": {action: taint, severity: critical, condition: GPUFault}
      default: {action: event}
    tests:
      match: ['NVRM: Xid (PCI:0000:3b:00): 79, x']
      no_match: ['NVRM: Xid']
  - id: pin.plain
    sources: [kernel]
    pattern: 'fallen off the bus'
    tests:
      match: ['GPU has fallen off the bus']
      no_match: ['GPU']
)");
  std::string log = dir.Write("k.log",
                              "[Sun Nov 22 07:02:53 2026] NVRM: Xid (PCI:0000:3b:00): 79, "
                              "\"q\" \\ \x01 caf\xc3\xa9 \xff, GPU has fallen off the bus\n");
  Run r = Scan({"--no-builtin", "--rules", pack, "--node", "gpu-9", log});
  REQUIRE(r.status == 0);
  const std::size_t at = r.out.find("\"detected_time\":\"");
  REQUIRE(at != std::string::npos);
  const std::string detected = r.out.substr(at + 17, r.out.find('"', at + 17) - at - 17);
  std::string want =
      R"({"file":"@F","line":1,"schema":1,"id":"@ID1","node":"gpu-9","boot_id":"","source":"file",)"
      R"("origin":"kernel","rule":"pin.xid","pack":"pin","category":"hardware",)"
      R"("severity":"critical","action":"taint","summary":"Xid 79 on 0000:3b:00 \"quoted\"",)"
      R"("fields":{"pci":"0000:3b:00","xid":"79"},)"
      R"("message":"NVRM: Xid (PCI:0000:3b:00): 79, \"q\" \\ \u0001 caf)"
      "\xc3\xa9 \xef\xbf\xbd"
      R"(, GPU has fallen off the bus","log_time":"2026-11-22T07:02:53.000000Z",)"
      R"("detected_time":"@D","labels":{"file":"@F","line":"1"},"suppressed":0,)"
      R"("threshold":{"count":2,"key":["pci"],"window":"10m"},"expire":"1h","condition":"GPUFault"})"
      "\n"
      R"({"file":"@F","line":1,"schema":1,"id":"@ID2","node":"gpu-9","boot_id":"","source":"file",)"
      R"("origin":"kernel","rule":"pin.plain","pack":"pin","category":"","severity":"warning",)"
      R"("action":"event","summary":"pin.plain","fields":{},)"
      R"("message":"NVRM: Xid (PCI:0000:3b:00): 79, \"q\" \\ \u0001 caf)"
      "\xc3\xa9 \xef\xbf\xbd"
      R"(, GPU has fallen off the bus","log_time":"2026-11-22T07:02:53.000000Z",)"
      R"("detected_time":"@D","labels":{"file":"@F","line":"1"},"suppressed":0})"
      "\n";
  const auto fill = [&want](std::string_view mark, const std::string& value) {
    for (std::size_t p = want.find(mark); p != std::string::npos; p = want.find(mark, p)) {
      want.replace(p, mark.size(), value);
      p += value.size();
    }
  };
  fill("@ID1", MakeEventId("gpu-9", "file", log + ":1", "pin.xid"));
  fill("@ID2", MakeEventId("gpu-9", "file", log + ":1", "pin.plain"));
  fill("@F", log);
  fill("@D", detected);
  CHECK(r.out == want);
}

// `faultline scan` keeps the text of what events share (EventTextMemo: a
// rule's members, its summary, the times, the file's label) from one event
// to the next, across files too: a scan of two files must print each file's
// events as a scan of that file alone does, byte for byte but for the run's
// detected time, with lines of their own times and without, rules that
// interpolate and rules that do not.
TEST_CASE("scan of two files prints each file's events as a scan of that file alone does") {
  TempDir dir;
  std::string pack = dir.Write("t.yaml", R"(pack: two
version: 1
rules:
  - id: two.xid
    sources: [kernel]
    pattern: 'NVRM: Xid \(PCI:(?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+)(?:, bus (?P<bus>\d+))?'
    summary: 'Xid {xid} on {pci}{? (bus {bus})}'
    tests:
      match: ['NVRM: Xid (PCI:0000:3b:00): 79, x']
      no_match: ['NVRM: Xid']
  - id: two.plain
    sources: [kernel]
    pattern: 'fallen off the bus'
    tests:
      match: ['GPU has fallen off the bus']
      no_match: ['GPU']
)");
  const std::string lines =
      "[Sun Nov 22 07:02:53 2026] NVRM: Xid (PCI:0000:3b:00): 79, fallen off the bus\n"
      "NVRM: Xid (PCI:0000:5e:00): 48, bus 7\n"
      "quiet line\n"
      "GPU has fallen off the bus\n"
      "[Sun Nov 22 07:02:54 2026] NVRM: Xid (PCI:0000:3b:00): 79, again\n";
  const std::string a = dir.Write("a.log", lines);
  const std::string b = dir.Write("b \"quoted\".log", lines + "NVRM: Xid (PCI:0000:86:00): 13\n");
  // Each event's detected time (and log_time where it is the same) as @D.
  const auto normalized = [](const std::string& text) {
    std::string out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const std::size_t at = line.find("\"detected_time\":\"");
      REQUIRE(at != std::string::npos);
      const std::string value = line.substr(at + 16, line.find('"', at + 17) - at - 15);
      for (std::size_t p = line.find(value); p != std::string::npos; p = line.find(value, p)) {
        line.replace(p, value.size(), "\"@D\"");
      }
      out += line + "\n";
    }
    return out;
  };
  const std::vector<std::string> base = {"--no-builtin", "--rules", pack, "--node", "gpu-9"};
  const auto scan = [&](const std::vector<std::string>& files) {
    std::vector<std::string> args = base;
    args.insert(args.end(), files.begin(), files.end());
    Run r = Scan(args);
    REQUIRE(r.status == 0);
    return normalized(r.out);
  };
  const std::string both = scan({a, b, a});
  const std::string alone_a = scan({a});
  const std::string alone_b = scan({b});
  CHECK(std::count(alone_a.begin(), alone_a.end(), '\n') == 5);
  CHECK(both == alone_a + alone_b + alone_a);
}

// The event id is what a re-scan and the agent's re-sent events are
// recognised by downstream: its value for given parts is pinned.
TEST_CASE("MakeEventId gives the same id for the same parts as it always did") {
  CHECK(MakeEventId("gpu-9", "file", "/var/log/k.log:1", "pin.xid") ==
        "3a25b77e89db330f07224208425ac60a");
  CHECK(MakeEventId("", "", "", "") == "4d25767f9dce13f516227b3dc2d64d24");
}

}  // namespace
}  // namespace faultline
