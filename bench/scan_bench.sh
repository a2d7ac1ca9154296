#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# One command: build faultline (Release), generate the benchmark corpus, and
# print single-thread MB/s and lines/s for `faultline scan`, `rg -j1 -c -f`,
# a Vectorscan database of the same patterns (bench/hs_count.cc, block mode
# over the whole buffer and streaming) and `grep -E -c -f` on the same corpus
# with the same patterns, checking every count against the generator's
# ground truth (per rule for faultline and Vectorscan).
#
#   bench/scan_bench.sh [--size-mb 256] [--fault-rate 0.001] [--near-misses]
#                       [--runs 3] [--no-grep]
#
# faultline, rg and Vectorscan run interleaved (fl, rg, hs, hs-stream, fl,
# ...) so that all see the same load from the rest of the machine; best and
# median of the runs are printed with the load average before and after.
#
# Environment: FL_BENCH_BUILD (build dir, default build-bench), FL_BENCH_BINARY
# (a faultline binary to use instead of building one), FL_BENCH_HS_COUNT (a built
# fl-hs-count, the CMake target, instead of compiling bench/hs_count.cc here),
# FL_BENCH_DIR (corpus
# dir, default $TMPDIR/faultline-bench), FL_BENCH_CPU (core, 0),
# FL_GREP_TIMEOUT (seconds, 1200).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=256
RUNS=3
GREP=1
RATE=0.001
NEAR=
while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) SIZE=$2; shift 2 ;;
    --fault-rate) RATE=$2; shift 2 ;;
    --near-misses) NEAR=--near-misses; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    --no-grep) GREP=0; shift ;;
    *) echo "usage: $0 [--size-mb N] [--fault-rate R] [--near-misses] [--runs N] [--no-grep]" >&2
       exit 2 ;;
  esac
done
BUILD=${FL_BENCH_BUILD:-$ROOT/build-bench}
WORK=${FL_BENCH_DIR:-${TMPDIR:-/tmp}/faultline-bench}
CPU=${FL_BENCH_CPU:-0}
mkdir -p "$WORK"

if [ ! -f "$ROOT/bench/gen_corpus.py" ]; then
  echo "bench/gen_corpus.py is missing" >&2
  exit 2
fi
# The peers (rg, grep, Vectorscan's headers) and python3 come with the test
# dependencies; installed here when missing, so that this works on a fresh machine.
"$ROOT/deploy/install-deps.sh" --test >&2
if [ -n "${FL_BENCH_BINARY:-}" ]; then
  FAULTLINE=$FL_BENCH_BINARY
else
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
  cmake --build "$BUILD" --target faultline -j2 >/dev/null
  FAULTLINE="$BUILD/matcher/faultline"
fi

# The Vectorscan peer: built here with the system compiler, -O2 like the
# distribution's libhs, whatever build type faultline has.
HS_COUNT=${FL_BENCH_HS_COUNT:-$WORK/fl-hs-count}
if [ -z "${FL_BENCH_HS_COUNT:-}" ] && { [ ! -x "$HS_COUNT" ] || [ "$ROOT/bench/hs_count.cc" -nt "$HS_COUNT" ]; }; then
  # shellcheck disable=SC2046
  c++ -std=c++20 -O2 $(pkg-config --cflags libhs) "$ROOT/bench/hs_count.cc" \
    $(pkg-config --libs libhs) -o "$HS_COUNT"
fi

# The 0.1% corpus keeps its old name (cached corpora stay valid).
NAME="corpus-$SIZE"
[ "$RATE" = 0.001 ] || NAME="$NAME-rate$RATE"
[ -z "$NEAR" ] || NAME="$NAME-nearmiss"
CORPUS="$WORK/$NAME.log"
TRUTH="$WORK/$NAME.truth.json"
if [ ! -s "$CORPUS" ] || [ ! -s "$TRUTH" ] || [ "$ROOT/bench/gen_corpus.py" -nt "$CORPUS" ]; then
  echo "generating $SIZE MiB corpus in $CORPUS ..." >&2
  # shellcheck disable=SC2086
  python3 "$ROOT/bench/gen_corpus.py" --size-mb "$SIZE" --fault-rate "$RATE" $NEAR --seed 1 \
    --out "$CORPUS" --truth "$TRUTH"
fi
"$FAULTLINE" rules list --format ere > "$WORK/patterns.ere" 2> "$WORK/skipped.txt"
# rg's copy with word boundaries in RE2's ASCII meaning (bench/rg_syntax.py).
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from rg_syntax import for_rg
for line in sys.stdin: sys.stdout.write(for_rg(line))' "$ROOT/bench" \
  < "$WORK/patterns.ere" > "$WORK/patterns.rg"
"$FAULTLINE" rules list --format json > "$WORK/rules.json"

exec python3 - "$FAULTLINE" "$CORPUS" "$TRUTH" "$WORK" "$CPU" "$RUNS" "$GREP" "$HS_COUNT" <<'PY'
import collections, json, os, platform, statistics, subprocess, sys, time

faultline, corpus, truth_path, work, cpu, runs, do_grep, hs_count = sys.argv[1:]
runs, do_grep = int(runs), do_grep == "1"
truth = json.load(open(truth_path))
size = os.path.getsize(corpus)
lines = truth["lines"]
patterns = os.path.join(work, "patterns.ere")
skipped = [l.strip() for l in open(os.path.join(work, "skipped.txt")) if l.strip()]
n_patterns = sum(1 for _ in open(patterns))
# The rule id of each exported pattern: enabled rules in order, minus those
# `rules list --format ere` skipped ("...: skipped ID: why").
skipped_ids = {l.split("skipped ", 1)[1].split(":", 1)[0] for l in skipped if "skipped " in l}
pattern_ids = [r["id"] for r in json.load(open(os.path.join(work, "rules.json")))
               if not r["disabled"] and r["id"] not in skipped_ids]
assert len(pattern_ids) == n_patterns, (len(pattern_ids), n_patterns)

def run(argv, out_path, timeout=None):
    """Runs argv pinned to one core; returns (wall s, cpu s, exit status)."""
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        p = subprocess.Popen(["taskset", "-c", cpu] + argv, stdout=out, stderr=subprocess.DEVNULL)
        try:
            _, status, usage = os.wait4(p.pid, 0)
        except KeyboardInterrupt:
            p.kill()
            raise
        wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)

def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])

def interleaved(commands, n):
    """Runs each (argv, out_path) in turn, n rounds; per command returns
    (best wall, best cpu, median wall, median cpu, last exit status)."""
    results = [[] for _ in commands]
    for _ in range(n):
        for i, (argv, out_path) in enumerate(commands):
            results[i].append(run(argv, out_path))
    return [(min(r[0] for r in rs), min(r[1] for r in rs), statistics.median(r[0] for r in rs),
             statistics.median(r[1] for r in rs), rs[-1][2]) for rs in results]

subprocess.run(["cat", corpus], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
rows = []
medians = []
ok = True

fl_out = os.path.join(work, "faultline.json")
rg_out = os.path.join(work, "rg.txt")
load_before = loadavg()
hs_outs = {m: os.path.join(work, "hs-%s.json" % m) for m in ("block", "stream")}
(fl_res, rg_res, hsb_res, hss_res) = interleaved(
    [([faultline, "scan", "--source", "any", "--all", "--format", "json", corpus], fl_out),
     (["rg", "-j1", "-c", "-f", os.path.join(work, "patterns.rg"), corpus], rg_out),
     ([hs_count, "block", patterns, corpus], hs_outs["block"]),
     ([hs_count, "stream", patterns, corpus], hs_outs["stream"])], runs)
load_after = loadavg()
wall, cpu_s, _, _, status = fl_res
medians.append(("faultline", fl_res[2], fl_res[3]))
medians.append(("rg", rg_res[2], rg_res[3]))
medians.append(("vectorscan block", hsb_res[2], hsb_res[3]))
medians.append(("vectorscan stream", hss_res[2], hss_res[3]))
per_rule = collections.Counter()
fl_lines = set()
for line in open(fl_out):
    e = json.loads(line)
    per_rule[e["rule"]] += 1
    fl_lines.add(e["line"])
fl_check = dict(per_rule) == truth["per_rule"] and len(fl_lines) == truth["fault_lines"]
ok &= fl_check and status == 0
rows.append(("faultline scan --format json", wall, cpu_s, len(fl_lines),
             "FAILED: faultline exited %d" % status if status != 0 else
             "per-rule counts equal truth" if fl_check else "MISMATCH with truth"))

expected_rg = truth["fault_lines"] if not skipped else None
wall, cpu_s, _, _, status = rg_res
rg_count = int(open(rg_out).read().strip() or 0)
rg_check = expected_rg is None or rg_count == expected_rg
# rg exits 1 when no line matches; anything else is a failed peer, and a
# ratio against a run that did not happen would mislead.
rg_ran = status in (0, 1)
ok &= rg_check and rg_ran
rows.append(("rg -j1 -c -f patterns.rg", wall, cpu_s, rg_count,
             "FAILED: rg exited %d" % status if not rg_ran else
             ("equals truth" if rg_check else "MISMATCH with truth") if expected_rg is not None
             else "%d rules not expressible in ERE" % len(skipped)))

for mode, res in (("block", hsb_res), ("stream", hss_res)):
    wall, cpu_s, _, _, status = res
    if status != 0:
        ok = False
        rows.append(("vectorscan %s (fl-hs-count)" % mode, wall, cpu_s, None,
                     "FAILED: fl-hs-count exited %d" % status))
        continue
    hs = json.load(open(hs_outs[mode]))
    hs_rule = collections.Counter()
    for rid, n in zip(pattern_ids, hs["per_pattern"]):
        if n:
            hs_rule[rid] += n
    # Rules that were skipped (by the export or by Vectorscan) are left out of the comparison.
    left_out = set(skipped_ids) | {pattern_ids[i] for i in hs["skipped"]}
    want = {k: v for k, v in truth["per_rule"].items() if k not in left_out}
    hs_check = dict(hs_rule) == want and status == 0
    if not left_out:
        hs_check &= hs["lines"] == truth["fault_lines"]
    ok &= hs_check
    rows.append(("vectorscan %s (fl-hs-count)" % mode, wall, cpu_s, hs["lines"],
                 ("per-rule counts equal truth" if hs_check else "MISMATCH with truth") +
                 ("" if not left_out else " (%d rules left out)" % len(left_out))))

if do_grep:
    grep_out = os.path.join(work, "grep.txt")
    timeout = int(os.environ.get("FL_GREP_TIMEOUT", "1200"))
    # LC_ALL=C: bytes, as faultline and rg see them; in a UTF-8 locale GNU
    # grep's multibyte matcher is orders of magnitude slower on these patterns.
    wall, cpu_s, status = run(["timeout", str(timeout), "env", "LC_ALL=C", "grep", "-E", "-c",
                               "-f", patterns, corpus], grep_out)
    if status == 124:
        rows.append(("grep -E -c -f patterns.ere", wall, cpu_s, None, "timed out"))
    else:
        grep_count = int(open(grep_out).read().strip() or 0)
        grep_check = grep_count == rg_count
        ok &= grep_check
        rows.append(("grep -E -c -f patterns.ere (1 run)", wall, cpu_s, grep_count,
                     "equals rg" if grep_check else "MISMATCH with rg"))

cpu_model = "?"
for l in open("/proc/cpuinfo"):
    if l.startswith("model name"):
        cpu_model = l.split(":", 1)[1].strip()
        break
print("machine: %s, nproc %d, %s; pinned to core %s" % (cpu_model, os.cpu_count(), platform.release(), cpu))
print("corpus: %.0f MiB, fault rate %s%s, %d lines, %d fault lines (%d matches), %d ERE patterns%s" % (
    size / 2**20, truth.get("fault_rate"), ", near misses only" if truth.get("near_misses") else "", lines, truth["fault_lines"], truth["matches"], n_patterns,
    "; skipped: " + "; ".join(skipped) if skipped else ""))
print("best of %d interleaved runs, whole process; MB = 10^6 bytes; cpu = user+sys" % runs)
print("load average before %s, after %s" % (load_before, load_after))
print("%-36s %8s %9s %11s %8s %9s %7s %9s  %s" % ("tool", "wall s", "MB/s", "lines/s", "cpu s",
                                                  "MB/cpu-s", "vs rg", "lines", "check"))
rg_wall, rg_cpu = rows[1][1], rows[1][2]
for name, wall, cpu_s, count, check in rows:
    print("%-36s %8.2f %9.0f %11.0f %8.2f %9.0f %6.2fx %9s  %s" % (
        name, wall, size / 1e6 / wall, lines / wall, cpu_s, size / 1e6 / max(cpu_s, 1e-9),
        rg_wall / wall, "-" if count is None else count, check))
print("faultline vs rg: %.2fx by wall time, %.2fx by cpu time (target 3x)" % (
    rg_wall / rows[0][1], rg_cpu / max(rows[0][2], 1e-9)))
for row in rows[2:4]:
    print("faultline vs %s: %.2fx by wall time, %.2fx by cpu time (target 1.5x)" % (
        row[0].split(" (")[0], row[1] / rows[0][1], row[2] / max(rows[0][2], 1e-9)))
print("medians: " + "; ".join("%s wall %.2f s cpu %.2f s" % m for m in medians))
print("median ratios (faultline vs): " + "; ".join(
    "%s %.2fx wall, %.2fx cpu" % (m[0], m[1] / medians[0][1], m[2] / max(medians[0][2], 1e-9))
    for m in medians[1:]))
sys.exit(0 if ok else 1)
PY
