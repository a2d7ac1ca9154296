// SPDX-License-Identifier: Apache-2.0
#include "collector/sources/ibcounters_source.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "collector/sources/produced_records.h"

namespace faultline {
namespace {

constexpr std::string_view kComponent = "ibcounters";

// 16 hex digits of FNV-1a over the change's text (port, counter, values).
std::string TextFingerprint(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

// The checkpoint: the snapshot (IbSnapshotToJson) plus "sequence", the
// number of the newest poll whose records were all committed.
std::uint64_t SequenceFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("sequence") && j["sequence"].is_number_unsigned()) {
    return j["sequence"].get<std::uint64_t>();
  }
  return 0;  // a checkpoint from before the sequence was kept
}

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string content(256, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

// Reads every port under <root>/class/infiniband. Values that do not parse
// are left out and counted in `*parse_errors`. A missing tree is an empty
// snapshot.
IbSnapshot ReadIbSnapshot(const std::string& sysfs_root, std::uint64_t* parse_errors) {
  namespace fs = std::filesystem;
  IbSnapshot snapshot;
  std::error_code ec;
  const fs::path base = fs::path(sysfs_root) / "class" / "infiniband";
  // Devices in /sys/class/infiniband are symlinks into /sys/devices.
  for (fs::directory_iterator dev(base, ec), end; !ec && dev != end; dev.increment(ec)) {
    const fs::path ports = dev->path() / "ports";
    std::error_code port_ec;
    for (fs::directory_iterator port(ports, port_ec); !port_ec && port != end;
         port.increment(port_ec)) {
      IbPortState state;
      if (auto raw = ReadSmallFile(port->path() / "state")) {
        state.state = ParseSysfsState(*raw);
        if (!state.state) ++*parse_errors;
      }
      if (auto raw = ReadSmallFile(port->path() / "phys_state")) {
        state.phys_state = ParseSysfsState(*raw);
        if (!state.phys_state) ++*parse_errors;
      }
      for (std::string_view name : kIbCounterNames) {
        auto raw = ReadSmallFile(port->path() / "counters" / name);
        if (!raw) continue;
        if (auto value = ParseSysfsCounter(*raw)) {
          state.counters[std::string(name)] = *value;
        } else {
          ++*parse_errors;
        }
      }
      snapshot[{dev->path().filename().string(), port->path().filename().string()}] =
          std::move(state);
    }
  }
  return snapshot;
}

}  // namespace

IbCountersSource::IbCountersSource(const Options& options, const Clock& clock)
    : options_(options), clock_(clock), store_(options.state_dir, "ibcounters") {}

Result<std::unique_ptr<IbCountersSource>> IbCountersSource::Open(const Options& options,
                                                                 const Clock& clock) {
  if (options.interval.count() <= 0) {
    return InvalidArgumentError("ibcounters interval must be positive");
  }
  std::unique_ptr<IbCountersSource> source(new IbCountersSource(options, clock));
  FL_RETURN_IF_ERROR(source->wakeup_.status());

  Result<std::optional<std::string>> loaded = source->store_.Load();
  std::optional<IbSnapshot> saved;
  if (!loaded.ok()) {
    SourceCounters::Add(source->counters_.parse_errors);
    LogWarning(kComponent, "ignoring unusable checkpoint",
               {{"path", source->store_.path()}, {"error", loaded.error().ToString()}});
  } else if (loaded->has_value()) {
    Result<IbSnapshot> parsed = IbSnapshotFromJson(**loaded);
    if (parsed.ok()) {
      saved = std::move(*parsed);
      source->sequence_ = source->committed_sequence_ = SequenceFromJson(**loaded);
    } else {
      SourceCounters::Add(source->counters_.parse_errors);
      LogWarning(kComponent, "ignoring checkpoint that is not an ibcounters checkpoint",
                 {{"path", source->store_.path()}, {"error", parsed.error().message()}});
    }
  }

  if (saved) {
    // The first Read() polls at once and reports what changed while we were down.
    source->last_ = *saved;
    source->committed_ = std::move(saved);
  } else {
    std::uint64_t errors = 0;
    IbSnapshot first = ReadIbSnapshot(options.sysfs_root, &errors);
    SourceCounters::Add(source->counters_.parse_errors, errors);
    LogInfo(kComponent, "baseline taken", {{"root", options.sysfs_root}, {"ports", first.size()}});
    source->Publish(first, DescribeInitialIbSnapshot(first));
  }
  return source;
}

void IbCountersSource::Poll() {
  std::uint64_t errors = 0;
  IbSnapshot now = ReadIbSnapshot(options_.sysfs_root, &errors);
  SourceCounters::Add(counters_.parse_errors, errors);
  if (errors > 0) {
    // A value that did not parse keeps its previous reading, so that a
    // flaky file neither fakes a change nor resets a baseline.
    for (auto& [key, port] : now) {
      auto it = last_.find(key);
      if (it == last_.end()) continue;
      if (!port.state) port.state = it->second.state;
      if (!port.phys_state) port.phys_state = it->second.phys_state;
      for (const auto& [name, value] : it->second.counters) port.counters.emplace(name, value);
    }
  }
  std::vector<IbChange> changes = DiffIbSnapshots(last_, now);
  Publish(now, changes);
}

void IbCountersSource::Publish(const IbSnapshot& snapshot, const std::vector<IbChange>& changes) {
  // Only polls that found changes are numbered: after a restart the first
  // poll with changes gets the number the lost one had, so a record re-sent
  // from the same checkpoint keeps its cursor (and its event id) however
  // many empty polls the previous process made.
  if (!changes.empty()) ++sequence_;
  last_ = snapshot;
  const auto now = clock_.Now();
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const IbChange& c = changes[i];
    LogRecord r;
    r.source = "ibcounters";
    r.origin = Origin::kIbCounters;
    r.text = c.text;
    r.time = now;
    // The fingerprint tells apart records that reuse a number: after a
    // restart the diff against the checkpoint may differ from what the
    // lost process sent under that number (a counter grew again).
    r.cursor = std::to_string(sequence_) + ":" + std::to_string(i) + ":" + TextFingerprint(c.text);
    r.labels = {{"device", c.port.device}, {"port", c.port.port}, {"counter", c.counter}};
    SourceCounters::Add(counters_.records);
    SourceCounters::Add(counters_.bytes, r.text.size());
    ready_.push_back(std::move(r));
  }
  in_flight_.push_back({sequence_, snapshot, changes.size()});
  Advance();
}

void IbCountersSource::Advance() {
  // Commits arrive in order, so a generation is done once it and every
  // older one have no uncommitted records left.
  while (!in_flight_.empty() && in_flight_.front().uncommitted == 0) {
    if (committed_ != in_flight_.front().snapshot ||
        committed_sequence_ != in_flight_.front().number) {
      committed_ = std::move(in_flight_.front().snapshot);
      committed_sequence_ = in_flight_.front().number;
      dirty_ = true;
    }
    in_flight_.pop_front();
  }
}

Status IbCountersSource::Read(std::vector<LogRecord>& out, std::size_t max_records,
                              std::stop_token stop) {
  return ReadProducedRecords(
      ready_, out, max_records, stop,
      [this] {
        if (!poll_now_) return;
        poll_now_ = false;
        Poll();
      },
      [this, &stop]() -> Status {
        Result<WaitOutcome> w = WaitReadable(-1, wakeup_, stop, options_.interval);
        if (!w.ok()) return w.error();
        poll_now_ = *w != WaitOutcome::kStopped;  // the interval passed: poll
        return OkStatus();
      });
}

void IbCountersSource::Commit(std::string_view cursor) {
  std::uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), number);
  if (ec != std::errc() || ptr == cursor.data() + cursor.size() || *ptr != ':') return;
  for (Generation& g : in_flight_) {
    if (g.number == number && g.uncommitted > 0) {
      --g.uncommitted;
      break;
    }
  }
  Advance();
}

Status IbCountersSource::SaveCheckpoint() {
  if (!dirty_ || !committed_) return OkStatus();
  nlohmann::json doc = nlohmann::json::parse(IbSnapshotToJson(*committed_));
  doc["sequence"] = committed_sequence_;
  FL_RETURN_IF_ERROR(store_.Save(doc.dump()));
  dirty_ = false;
  return OkStatus();
}

}  // namespace faultline
