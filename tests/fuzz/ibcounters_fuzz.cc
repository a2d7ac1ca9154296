// SPDX-License-Identifier: Apache-2.0
// The ibcounters parsers on arbitrary bytes: sysfs state and counter values,
// the checkpoint JSON, and the diff of two snapshots built from the input.
//
// Input convention: lines of "device port state phys_state downed", split on
// spaces (missing fields are left unset); a line "--" ends the first
// snapshot and starts the second. The whole input is also tried as a
// checkpoint JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "collector/sources/ibcounters_diff.h"

namespace {

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    std::size_t sp = line.find(' ');
    fields.push_back(line.substr(0, sp));
    line.remove_prefix(sp == std::string_view::npos ? line.size() : sp + 1);
  }
  return fields;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 16UL * 1024) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  faultline::IbSnapshot snapshots[2];
  int which = 0;
  while (!input.empty()) {
    const std::size_t nl = input.find('\n');
    const std::string_view line = input.substr(0, nl);
    input.remove_prefix(nl == std::string_view::npos ? input.size() : nl + 1);
    if (line == "--") {
      which = 1;
      continue;
    }
    std::vector<std::string_view> f = Split(line);
    if (f.size() < 2) continue;
    faultline::IbPortState& port = snapshots[which][{std::string(f[0]), std::string(f[1])}];
    if (f.size() > 2) port.state = faultline::ParseSysfsState(f[2]);
    if (f.size() > 3) port.phys_state = faultline::ParseSysfsState(f[3]);
    if (f.size() > 4) {
      if (auto v = faultline::ParseSysfsCounter(f[4])) port.counters["link_downed"] = *v;
    }
  }
  for (const faultline::IbChange& c : faultline::DiffIbSnapshots(snapshots[0], snapshots[1])) {
    if (c.text.empty() || c.counter.empty()) std::abort();
  }
  (void)faultline::DescribeInitialIbSnapshot(snapshots[0]);
  // The checkpoint form must parse back (equal unless invalid UTF-8 was replaced).
  faultline::Result<faultline::IbSnapshot> back =
      faultline::IbSnapshotFromJson(faultline::IbSnapshotToJson(snapshots[1]));
  if (!back.ok() || back->size() > snapshots[1].size()) std::abort();
  (void)faultline::IbSnapshotFromJson(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
