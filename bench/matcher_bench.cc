// SPDX-License-Identifier: Apache-2.0
// RuleSet::Match per line and RuleSet::ScanBuffer per buffer, with the
// built-in packs, on a synthetic mix of noise and a few fault lines.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "matcher/rule_set.h"

namespace faultline {
namespace {

const std::vector<std::string>& Lines() {
  static const std::vector<std::string> lines = {
      "[ 1843.291774] audit: type=1400 audit(1700002210.117:212): apparmor=\"STATUS\" pid=91822",
      "Nov 22 07:02:53 gpu-17 kubelet[901]: I1122 07:02:53.179000 901 kubelet.go:2000] SyncLoop",
      "Nov 22 07:02:53 gpu-17 containerd[812]: level=info msg=\"StartContainer for abc\"",
      "2026-11-22T07:02:53.17905Z stderr F train-0:1:2 [3] NCCL INFO Channel 00/32 : 0 1 2 3",
      "mlx5_0 port 1 port_rcv_packets +672909 (total 2046949073)",
      "[ 1843.291790] EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode",
      "Nov 22 07:02:53 gpu-17 systemd[1]: Started Session 4 of user root.",
      "INFO epoch 1 step 100 loss 2.345 lr 0.0001 throughput 1234.5 samples/sec",
  };
  return lines;
}

std::shared_ptr<const RuleSet> BuiltinSet(bool prefilter) {
  Diagnostics diags;
  SourceTexts texts;
  CompileOptions options;
  options.use_prefilter = prefilter;
  return LoadRules({}, options, diags, texts);
}

void BM_MatchNoiseLine(benchmark::State& state) {
  auto set = BuiltinSet(true);
  std::vector<RuleMatch> out;
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop
    const std::string& line = Lines()[i++ % Lines().size()];
    out.clear();
    set->Match(line, Origin::kAny, out);
    bytes += line.size();
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_MatchNoiseLine);

void BM_MatchXidLine(benchmark::State& state) {
  auto set = BuiltinSet(true);
  const std::string line =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=1912, name=nvidia-smi, GPU has fallen off the bus.";
  std::vector<RuleMatch> out;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop
    out.clear();
    set->Match(line, Origin::kKernel, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * line.size()));
}
BENCHMARK(BM_MatchXidLine);

void BM_ScanBuffer(benchmark::State& state) {
  auto set = BuiltinSet(state.range(0) != 0);
  std::string buffer;
  for (int i = 0; buffer.size() < (8u << 20); ++i) {
    buffer += Lines()[static_cast<std::size_t>(i) % Lines().size()];
    buffer += '\n';
    if (i % 1000 == 0) buffer += "[ 5120.652191] NVRM: Xid (PCI:0000:3b:00): 79, pid=1912\n";
  }
  std::size_t matches = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): Google Benchmark's loop
    set->ScanBuffer(
        buffer, Origin::kAny,
        [&](std::string_view, std::uint64_t, std::vector<RuleMatch>& m) { matches += m.size(); });
  }
  benchmark::DoNotOptimize(matches);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * buffer.size()));
}
BENCHMARK(BM_ScanBuffer)->Arg(1)->Arg(0)->ArgName("prefilter");

}  // namespace
}  // namespace faultline

BENCHMARK_MAIN();
