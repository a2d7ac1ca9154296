#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 12's five figures in one run, each beside its peer or target, as the
# table bench/README.md records: the matcher against rg and Vectorscan (and
# how it degrades), detection latency, tainter throughput, agent memory.
# Every figure comes from the bench command named in its row; their full
# outputs are kept in the log directory printed at the end.
#
# usage: bench/report.sh BUILD_DIR [--quick]
#   BUILD_DIR   a RelWithDebInfo or Release build with the test tools (build/
#               after tests/run.sh; configured and built here if it lacks them)
#   --quick     smaller runs (about 8 minutes instead of 20; the storms 1,000
#               nodes instead of 10,000): the figures are noisier, the ratios
#               still comparable
# Latency needs a writable /dev/kmsg (root); without it that row says SKIPPED.
# Exit status 1 if a command failed or one of its checks did (a count that
# differs from the truth); a figure below its target is reported, not failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${1:?usage: report.sh BUILD_DIR [--quick]}
QUICK=${2:-}
source "$HERE/bench_lib.sh"
bench_prepare "$BUILD" faultline faultline-agent faultline-tainter fl-mockcluster \
  fl-fake-apiserver
export FL_BENCH_NO_BUILD=1  # built once, above

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/faultline-report-XXXXXX")
if [[ $QUICK == --quick ]]; then
  SCAN_MB=64 DEGRADE_MB=16 SETS_MB=16 RUNS=2 INJECTIONS=10 EVENTS=20000 RATE_SECS=20 FLOOD=200000
  STORM_NODES=1000
else
  SCAN_MB=256 DEGRADE_MB=64 SETS_MB=256 RUNS=3 INJECTIONS=30 EVENTS=40000 RATE_SECS=60 FLOOD=1000000
  STORM_NODES=10000
fi
failed=()
# run NAME COMMAND...: its output to $LOGS/NAME.log; a failure is recorded.
run() {
  local name=$1
  shift
  echo "report: $name ..." >&2
  if ! "$@" >"$LOGS/$name.log" 2>&1; then failed+=("$name"); fi
}

export FL_BENCH_BINARY=$BUILD/matcher/faultline
run scan "$HERE/scan_bench.sh" --size-mb "$SCAN_MB" --runs "$RUNS" --no-grep
run scan-1pct "$HERE/scan_bench.sh" --size-mb "$DEGRADE_MB" --fault-rate 0.01 --runs "$RUNS" --no-grep
run scan-10pct "$HERE/scan_bench.sh" --size-mb "$DEGRADE_MB" --fault-rate 0.1 --runs "$RUNS" --no-grep
run scan-near "$HERE/scan_bench.sh" --size-mb "$DEGRADE_MB" --near-misses --runs "$RUNS" --no-grep
# Every pattern set on both corpora (bench/sets/, frozen before tuning), and at
# 10% fault lines on the generator's; then the start-up of the built-in packs.
run sets "$HERE/sets_bench.py" "$BUILD" --size-mb "$SETS_MB" --runs "$RUNS" --json "$LOGS/sets.json"
run sets-10pct "$HERE/sets_bench.py" "$BUILD" --size-mb "$DEGRADE_MB" --fault-rate 0.1 --bases gen \
  --runs "$RUNS" --json "$LOGS/sets-10pct.json"
run startup "$HERE/startup_bench.py" "$BUILD/matcher/faultline"
if [[ -w /dev/kmsg ]]; then
  run latency "$HERE/latency/latency.sh" "$BUILD" "$INJECTIONS"
else
  echo "SKIPPED: /dev/kmsg is not writable here" >"$LOGS/latency.log"
fi
# A run decides for ~0.2 s, and single runs spread by +-20% on this 2-core
# VM (the broker, librdkafka's fetch thread and the decide loop share the
# cores): the row is the median of RUNS runs, with their range.
for ((i = 1; i <= RUNS; i++)); do
  run "tainter-$i" "$HERE/tainter_bench.sh" "$BUILD" "$EVENTS"
done
run rate-10k "$HERE/agent_rate.sh" "$BUILD" 10000 "$RATE_SECS"
run rate-1k "$HERE/agent_rate.sh" "$BUILD" 1000 "$RATE_SECS"
run flood "$HERE/agent_flood.sh" "$BUILD" "$FLOOD"
# Issue 30.4, the storm (bench/README.md, "The 10,000-node storm"); their
# checks fail the report, their figures do not. At the project's defaults:
# the default client rate limit (qps 5 / burst 10) and the tainter's own
# valve (max_new_taints 5 per 10m: 5 taints, the rest refused and recorded),
# about 90 s at 10,000 nodes. Then the stress figure for a taint's own cost:
# the valve's share alone (max_fraction 0.1, no max_new_taints: 1,000
# taints at 10,000 nodes) at qps 50, about 4 minutes.
NODES=$STORM_NODES SPREAD_S=60 QPS=default VALVE=default MAX_REQUESTS_PER_TAINT=100 \
  TIMEOUT_S=3600 run storm "$HERE/../tests/chaos/storm.sh" "$BUILD"
NODES=$STORM_NODES SPREAD_S=60 QPS=50 VALVE=share MAX_REQUESTS_PER_TAINT=100 TIMEOUT_S=3600 \
  run storm-share "$HERE/../tests/chaos/storm.sh" "$BUILD"

STORM_NODES=$STORM_NODES python3 - "$LOGS" "$SCAN_MB" "$DEGRADE_MB" "$INJECTIONS" "$EVENTS" "$RATE_SECS" "$FLOOD" \
  "$RUNS" "${failed[@]}" <<'PY'
import json, os, re, statistics, sys
logs, scan_mb, degrade_mb, injections, events, rate_secs, flood, runs = sys.argv[1:9]
failed = set(sys.argv[9:])

def text(name):
    try:
        return open(os.path.join(logs, name + ".log")).read()
    except OSError:
        return ""

def find(name, pattern, group=1):
    m = re.search(pattern, text(name), re.M)
    return m.group(group) if m else None

rows = []  # (figure, command, measured, target, met)
def row(figure, command, measured, target="", met=None, name=None):
    if name in failed:
        measured, met = "FAILED (see its log)", False
    elif measured is None:
        measured = "no figure (see its log)"
    rows.append((figure, command, measured, target,
                 "" if met is None else ("met" if met else "below target")))

# A scan run exits 1 when any count differs from the truth, a peer's too:
# Debian's Vectorscan 5.4.9 in streaming mode counts one line too many on the
# 10% corpus (bench/README.md). Only faultline's own check fails the report;
# a peer's is shown beside its ratio.
def scan_ok(name):
    return bool(find(name, r"^faultline scan --format json .*(per-rule counts equal truth)$"))

def ratio_row(name, figure, command, peer, target):
    x = find(name, r"^faultline vs %s: [0-9.]+x by wall time, ([0-9.]+)x by cpu time" % re.escape(peer))
    check = find(name, r"^%s.*  (\S.*)$" % re.escape("rg -j1" if peer == "rg" else peer))
    if name in failed and scan_ok(name):
        failed.discard(name)
    measured = x and "%sx %s (cpu)" % (x, peer)
    if measured and check and "MISMATCH" in check:
        measured += "; the peer's count: " + check
    row(figure, command, measured, ">= %sx" % target if target else "",
        None if not (x and target) else float(x) >= float(target), name)

scan = "scan_bench.sh --size-mb %s" % scan_mb
ratio_row("scan", "1. matcher, 0.1% faults", scan, "rg", "3")
ratio_row("scan", "1. matcher, 0.1% faults", scan, "vectorscan block", "1.5")
ratio_row("scan", "1. matcher, 0.1% faults", scan, "vectorscan stream", "2")
mbs = find("scan", r"^faultline scan --format json\s+\S+\s+\S+\s+\S+\s+\S+\s+(\d+)")
row("1. matcher, built-in packs, one core", scan, mbs and "%s MB per CPU-second" % mbs,
    ">= 2000 MB/s", mbs and int(mbs) >= 2000, "scan")
for name, what, opts in (("scan-1pct", "1% faults", "--fault-rate 0.01"),
                         ("scan-10pct", "10% faults", "--fault-rate 0.1"),
                         ("scan-near", "every line a near miss", "--near-misses")):
    for peer in ("rg", "vectorscan block", "vectorscan stream"):
        ratio_row(name, "2. degrades: " + what, "scan_bench.sh --size-mb %s %s" % (degrade_mb, opts),
                  peer, None)

def set_rows(name, rate_label, targets):
    try:
        rows_json = json.load(open(os.path.join(logs, name + ".json")))
    except (OSError, ValueError):
        row("1b. pattern sets, " + rate_label, "sets_bench.py", None, name=name)
        return
    for r in rows_json:
        c = r["cpu"]
        fl = max(c["fl"], 1e-9)
        x = {k: c[k] / fl for k in ("rg", "block", "stream")}
        mbs = r["mib"] * 2**20 / 1e6 / fl
        met = all(x[k] >= t for k, t in targets.items())
        want = ", ".join(">= %gx %s" % (t, k) for k, t in targets.items())
        if r["set"] == "builtin" and "rg" in targets and "stream" in targets:
            met = met and mbs >= 2000
            want += ", >= 2000 MB/s"
        measured = "%.2fx rg, %.2fx vs block, %.2fx vs stream; %.0f MB/cpu-s; %.2f%% lines match" % (
            x["rg"], x["block"], x["stream"], mbs, 100.0 * r["fault_lines"] / max(r["lines"], 1))
        if not r["ok"]:
            measured += "; CHECK FAILED: " + "; ".join(r["checks"])
        else:  # a peer's wrong count (Vectorscan stream's known one) is shown, not failed
            measured += "".join("; the peer's count: " + c for c in r["checks"] if "MISMATCH" in c)
        row("1b. set %s, corpus %s, %s" % (r["set"], r["base"], rate_label),
            "sets_bench.py --size-mb %s%s" % (r["mib"] and round(r["mib"]),
                                              "" if r["rate"] == 0.001 else " --fault-rate %g" % r["rate"]),
            measured, want, met and r["ok"])

set_rows("sets", "0.1% faults", {"rg": 3, "stream": 2})
set_rows("sets-10pct", "10% faults", {"rg": 1})
ms = find("startup", r"median ([0-9.]+) ms cpu")
row("1c. start-up, built-in packs", "startup_bench.py", ms and "%s ms cpu (median)" % ms, "< 20 ms",
    ms and float(ms) < 20, "startup")

if "SKIPPED" in text("latency"):
    row("3. latency", "latency.sh", "SKIPPED: /dev/kmsg not writable")
else:
    for path, target in (("standalone", 50), ("kafka", 250)):
        p99 = find("latency", r"^%s\s+\d+\s+[0-9.]+\s+[0-9.]+\s+([0-9.]+)" % path)
        p50 = find("latency", r"^%s\s+\d+\s+([0-9.]+)" % path)
        row("3. latency, write -> taint, " + path, "latency.sh BUILD %s" % injections,
            p99 and "p99 %s ms (p50 %s)" % (p99, p50), "p99 < %d ms" % target,
            p99 and float(p99) < target, "latency")

def number(text):
    return int(text.replace(",", "")) if text else None

tainter_runs = ["tainter-%d" % i for i in range(1, int(runs) + 1)]
ok_runs = [n for n in tainter_runs if n not in failed]
rates = [number(find(n, r"^tainter decide rate:\s+([0-9,]+) events/s")) for n in ok_runs]
cpu_rates = [number(find(n, r"^tainter decide rate by CPU:\s+([0-9,]+)")) for n in ok_runs]
produce = find(ok_runs[0], r"^agent produce rate:\s+([0-9,]+)") if ok_runs else None
writes = find(ok_runs[0], r"^Kubernetes writes:\s+(.*)$") if ok_runs else None
# Any failed run fails the row (and the report), not only all of them.
first_failed = next((n for n in tainter_runs if n in failed), None)
measured = None
rate = None
if ok_runs and None not in rates and None not in cpu_rates:
    rate = statistics.median(rates)
    measured = "median %s events/s of %d runs (%s-%s; %s per CPU-s; agent produced %s/s)" % (
        format(int(rate), ","), len(rates), format(min(rates), ","), format(max(rates), ","),
        format(int(statistics.median(cpu_rates)), ","), produce)
row("4. tainter decide rate", "tainter_bench.sh BUILD %s" % events, measured,
    ">= 200,000/s", rate is not None and rate >= 200000, first_failed)
row("4. tainter Kubernetes writes", "tainter_bench.sh", writes, "bounded by node changes",
    None, first_failed)

for name, what in (("rate-10k", "10,000"), ("rate-1k", "1,000")):
    kib = find(name, r"^agent VmHWM:\s+\d+ MiB \((\d+) KiB")
    cpu = find(name, r"^agent CPU:\s+(\S+ s \([^)]*\))")
    row("5. agent peak RSS at %s lines/s" % what,
        "agent_rate.sh BUILD %s %s" % (what.replace(",", ""), rate_secs),
        kib and "%.1f MiB, CPU %s" % (int(kib) / 1024, cpu), "< 30 MiB",
        kib and int(kib) < 30 * 1024, name)
kib = find("flood", r"^agent peak RSS:\s+(\d+) KiB")
row("5. agent peak RSS, %s-line flood" % flood, "agent_flood.sh BUILD %s" % flood,
    kib and "%.1f MiB" % (int(kib) / 1024), "< 40 MiB", kib and int(kib) < 40 * 1024, "flood")

def storm_fields(name):
    """The storm's figure line, a reader of its fields, and the fields both rows judge."""
    line = find(name, r"^figure: (.*)$") or ""
    def field(key):
        m = re.search(r"\b%s=([0-9.]+)" % key, line)
        return float(m.group(1)) if m else None
    return (line, field) + tuple(field(k) for k in (
        "p99", "limit", "peak_tainted", "tainter_rss_max_mib", "nodes_cmd_max_ms",
        "requests_per_taint"))

# Row 6: the issue's "at the default client rate limit", at the project's
# defaults (valve too): every fault decided (taint or refusal recorded) with
# p99 under 60 s, the valve exact (peak tainted = its limit, never more:
# storm.sh fails otherwise), RSS, `nodes`.
storm, f, p99, limit, peak, rss, nodes_ms, per_taint = storm_fields("storm")
row("6. storm, %s nodes, 40%% faulting in 60 s, defaults (qps 5, valve)" % format(
        int(f("nodes") or 0), ","),
    "NODES=%s SPREAD_S=60 QPS=default VALVE=default storm.sh" % os.environ.get("STORM_NODES", "?"),
    storm and "decided p99 %s s; valve %s of %s; RSS %s MiB; nodes %s ms (%s requests/taint, "
    "%s refused: %s Events, %s counted)" % (
        p99, peak and int(peak), limit and int(limit), rss, nodes_ms, per_taint,
        f("refused_nodes") and int(f("refused_nodes")),
        f("valve_shut_events") and int(f("valve_shut_events")),
        f("refusal_events_suppressed") and int(f("refusal_events_suppressed"))),
    "p99 < 60 s; = limit; < 200 MiB; < 1000 ms",
    None not in (p99, limit, peak, rss, nodes_ms) and p99 < 60 and peak == limit and rss < 200
    and nodes_ms < 1000, "storm")
# Row 6b: many nodes tainted at once (the share alone), qps 50: what a new
# taint costs, the pod listings for the pod Events included.
storm, f, p99, limit, peak, rss, nodes_ms, per_taint = storm_fields("storm-share")
row("6b. storm, %s nodes, 40%% faulting in 60 s, share 0.1, qps 50" % format(
        int(f("nodes") or 0), ","),
    "NODES=%s SPREAD_S=60 QPS=50 VALVE=share storm.sh" % os.environ.get("STORM_NODES", "?"),
    storm and "%s requests/taint; valve %s of %s; RSS %s MiB; nodes %s ms (decided p99 %s s)" % (
        per_taint, peak and int(peak), limit and int(limit), rss, nodes_ms, p99),
    "<= 4; = limit; < 200 MiB; < 1000 ms",
    None not in (per_taint, limit, peak, rss, nodes_ms) and per_taint <= 4 and peak == limit
    and rss < 200 and nodes_ms < 1000, "storm-share")

machine = "?"
for l in open("/proc/cpuinfo"):
    if l.startswith("model name"):
        machine = l.split(":", 1)[1].strip()
        break
print("machine: %s, nproc %d; load average at the end: %s" % (
    machine, os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[:3])))
widths = [max(len(str(r[i])) for r in rows + [("figure", "command", "measured", "target", "")])
          for i in range(5)]
for r in [("figure", "command", "measured", "target", "")] + rows:
    print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
print("logs: %s" % logs)
if failed:
    print("failed: " + ", ".join(sorted(failed)))
sys.exit(1 if failed else 0)
PY
