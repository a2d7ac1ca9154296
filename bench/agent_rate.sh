#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Agent footprint at a steady line rate: a writer appends lines of the bench
# corpus (bench/gen_corpus.py, 0.1% fault lines) to a followed file at RATE
# lines/s for SECONDS; faultline-agent (built-in packs, file source,
# suppression_window 60s) matches them and publishes to fl-mockcluster.
# Prints the agent's peak RSS (VmHWM from /proc/PID/status, read just before
# SIGTERM), its CPU seconds (utime+stime from /proc/PID/stat) and the share
# of one core, beside the lines it read and the events it produced.
#
# usage: bench/agent_rate.sh BUILD_DIR [RATE=10000] [SECONDS=30]
#   FL_BENCH_DIR   where the corpus is cached (default $TMPDIR/faultline-bench)
#   FL_BENCH_SMAPS=FILE   also copy the agent's /proc/PID/smaps there at the peak
#   FL_AGENT=WRAPPER      run the agent through a wrapper (e.g. valgrind --tool=massif)
#   FL_BENCH_START_WAIT   seconds to wait for the agent's start (default 10; more under valgrind)
#   FL_BENCH_AGENT_YAML='queue: {max_uncommitted_records: 120000}'   appended to the agent's config
# Not part of ctest (tens of seconds).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../tests/support/e2e_lib.sh"
source "$HERE/bench_lib.sh"
bench_prepare "$1" faultline-agent fl-mockcluster
e2e_require python3 curl
e2e_init "$1" faultline-rate
RATE=${2:-10000}
SECS=${3:-30}

CACHE=${FL_BENCH_DIR:-${TMPDIR:-/tmp}/faultline-bench}
mkdir -p "$CACHE"
CORPUS=$CACHE/rate-corpus-64m.log
[[ -s $CORPUS ]] || python3 "$HERE/gen_corpus.py" --size-mb 64 --fault-rate 0.001 --seed 2 --out "$CORPUS"

e2e_start_mock -b 1 -t events:6:1
: >"$T/feed.log"
cat >"$T/agent.yaml" <<YAML
node_name: rate-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
suppression_window: 60s
rules: {builtin: true}
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  file: [{path: $T/feed.log, follow: true, origin: kernel}]
kafka: {brokers: "$BS", topic: events, properties: {log_level: "0"}}
${FL_BENCH_AGENT_YAML:-}
YAML
e2e_start agent "$AGENT" --config "$T/agent.yaml"
e2e_wait_log "${FL_BENCH_START_WAIT:-10}" agent '"msg":"started"'
# shellcheck disable=SC2154  # set by e2e_start
PID=$E2E_PID_agent
PORT=$(grep -o '"metrics_port":[0-9]*' "$T/agent.log" | cut -d: -f2)
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$PID/status"; }
metric() {
  curl -sf "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" 'index($1, m) == 1 {n += $2} END {print n + 0}'
}
start_hwm=$(hwm)
t0=$(ticks)
# The writer: RATE lines/s in 10 ms slices, appended and flushed each slice.
python3 - "$CORPUS" "$T/feed.log" "$RATE" "$SECS" <<'PY'
import sys, time
corpus, out, rate, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
src = open(corpus, "rb")
with open(out, "ab", buffering=0) as f:
    start = time.monotonic()
    sent = 0
    while True:
        now = time.monotonic() - start
        if now >= secs:
            break
        due = int(now * rate) - sent
        if due > 0:
            chunk = []
            for _ in range(due):
                line = src.readline()
                if not line:
                    src.seek(0)
                    line = src.readline()
                chunk.append(line)
            f.write(b"".join(chunk))
            sent += due
        time.sleep(0.01)
print(f"writer: {sent} lines in {secs:.0f} s", file=sys.stderr)
PY
# Let the agent catch up (bounded), then read the figures before stopping it.
for _ in $(seq 100); do
  [[ $(metric 'faultline_agent_source_lines_total{source="file"}') -ge $((RATE * SECS * 99 / 100)) ]] && break
  sleep 0.1
done
t1=$(ticks)
peak=$(hwm)
[[ -n "${FL_BENCH_SMAPS:-}" ]] && cp "/proc/$PID/smaps" "$FL_BENCH_SMAPS"
lines=$(metric 'faultline_agent_source_lines_total{source="file"}')
produced=$(metric 'faultline_agent_events_total{outcome="produced"}')
# Records read but not committable yet (a suppression window holds its first
# folded line, and every later one, until the window's event is delivered);
# the reader waits at queue.max_uncommitted_records.
uncommitted=$(metric 'faultline_agent_uncommitted_records')
hz=$(getconf CLK_TCK)
e2e_stop agent || true
cpu=$(awk -v t="$((t1 - t0))" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')
echo "rate:            $RATE lines/s for $SECS s (lines read: $lines, events produced: $produced)"
echo "uncommitted:     $uncommitted records at the end"
echo "agent CPU:       ${cpu} s ($(awk -v c="$cpu" -v s="$SECS" 'BEGIN { printf "%.2f", 100 * c / s }')% of one core)"
echo "agent VmHWM:     $((peak / 1024)) MiB ($peak KiB; after start-up: $((start_hwm / 1024)) MiB)"
echo "load average:    $(cut -d' ' -f1-3 /proc/loadavg) (at the end; 2 cores shared)"
