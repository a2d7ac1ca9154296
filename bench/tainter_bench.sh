#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tainter throughput: how many events/s one faultline-tainter replica decides
# from Kafka (fl-mockcluster, librdkafka's mock broker as a process, loopback)
# against the API double (fl-fake-apiserver, HTTPS), and how many Kubernetes
# writes it sends per event; printed beside the rate at which faultline-agent
# produced the same events.
#
# 1. faultline-agent (built-in packs, suppression off) reads a file of N
#    distinct lines for one node: alternately an Xid 79 (action taint: the
#    first taints the node, every later one is an event on an already-tainted
#    node) and an Xid 13 (action event: an event-only rule). Produce rate = N /
#    (agent "started" -> N events delivered).
# 2. faultline-tainter (a new group, so every event is live) then consumes
#    them. Decide rate = N / ("partitions assigned" -> decisions_total = N).
#    Writes = the API double's non-GET requests during the run.
#
# usage: bench/tainter_bench.sh BUILD_DIR [EVENTS=40000]   (fl-mockcluster keeps ~49,000 per partition)
#   FL_BENCH_KUBE='qps: 100, burst: 100'   extra kubernetes keys for the tainter
#   FL_BENCH_PERF=FILE   record the measured tainter with `perf record --call-graph dwarf`
#                        into FILE (read it with `perf report -i FILE --no-children`)
#   FL_TAINTER=WRAPPER   run the tainter through a script, e.g. one that execs
#                        `valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p.out
#                        BUILD/tainter/faultline-tainter "$@"`: instructions per
#                        event, which the machine's load does not move (bench/README.md)
# Not part of ctest (tens of seconds). python3, curl, jq.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../tests/support/e2e_lib.sh"
source "$HERE/bench_lib.sh"
bench_prepare "$1" faultline-agent faultline-tainter fl-mockcluster fl-fake-apiserver
e2e_require python3 curl jq
e2e_init "$1" faultline-tainter-bench
N=${2:-40000}
NODE=gpu-bench-0

e2e_start_api --node "$NODE:nvidia.com/gpu.present=true"
e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1

awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) {
  x = (i % 2 == 0) ? 79 : 13
  printf "[%d.%06d] NVRM: Xid (PCI:0000:3b:00): %d, pid=%d, name=bench%d, bench line\n", 1000 + i / 1000, i % 1000000, x, i, i } }' \
  >"$T/bench.lines"
# The followed file starts with one warm-up line (see step 0 below).
echo "[999.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=warmup, warm-up line" >"$T/lines.log"

cat >"$T/agent.yaml" <<YAML
node_name: $NODE
state_dir: $T/state
metrics_address: 127.0.0.1:0
suppression_window: 0s
rules: {builtin: true}
sources:
  kmsg: {enabled: false}
  journal: {enabled: false}
  podlog: {enabled: false}
  file: [{path: $T/lines.log, follow: true, origin: kernel}]
kafka: {brokers: "$BS", topic: events, properties: {log_level: "0"}}
YAML

now() { date +%s.%N; }
metric() {  # PORT NAME-PREFIX: sum of the matching samples
  curl -sf "http://127.0.0.1:$1/metrics" | awk -v m="$2" 'index($1, m) == 1 {n += $2} END {printf "%d\n", n}'
}
port_of() { grep -o '"metrics_port":[0-9]*' "$T/$1.log" | head -1 | cut -d: -f2; }

TPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# session.timeout.ms 6000: librdkafka's mock broker holds a group JOINING for
# session.timeout.ms - 1 s when a member rejoins after the last one left
# (step 2 below): 44 s with the default 45 s, 5 s with this (tests do the same).
cat >"$T/tainter.yaml" <<YAML
kafka: {brokers: "$BS", topic: events, group: bench, dead_letter_topic: events.dead-letter,
        properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500"}}
kubernetes: {kubeconfig: $T/kubeconfig${FL_BENCH_KUBE:+, $FL_BENCH_KUBE}}
valve: {max_new_taints: 0}
metrics_address: 127.0.0.1:$TPORT
YAML
# 0. The group's first member decides the warm-up event and commits it: with
# a committed offset, the measured member starts there (a new group would
# start at now - rebuild_span, which the mock broker cannot resolve, and
# re-read only the last rebuild_max_messages = 10,000 messages).
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
e2e_wait_log 60 tainter '"msg":"partitions assigned"'
e2e_start agent "$AGENT" --config "$T/agent.yaml"
e2e_wait_log 20 agent '"msg":"started"'
APORT=$(port_of agent)
warm_decided() { [[ $(metric "$TPORT" faultline_tainter_decisions_total) -ge 1 ]]; }
e2e_wait 30 warm_decided ||
  e2e_fail "the warm-up event was not decided"
sleep 2.5  # the daemon commits once a second
e2e_stop tainter || true

# 1. The agent produces N events.
a0=$(now)
cat "$T/bench.lines" >>"$T/lines.log"
until [[ $(metric "$APORT" 'faultline_agent_events_total{outcome="delivered"}') -ge $((N + 1)) ]]; do
  sleep 0.05
done
a1=$(now)
e2e_stop agent || true

# 2. The tainter decides them.
curl -sf --cacert "$T/ca.pem" -X DELETE "$API_URL/debug/requests" >/dev/null
mv "$T/tainter.log" "$T/tainter-warmup.log"
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
if [[ -n "${FL_BENCH_PERF:-}" ]]; then  # from the start: attaching takes longer than the run
  perf record -q --call-graph dwarf,16384 -F 2000 -p "$E2E_PID_tainter" -o "$FL_BENCH_PERF" 2>/dev/null &
  PERF_PID=$!
fi
# shellcheck disable=SC2154  # set by e2e_start
PID=$E2E_PID_tainter
# The decide rate, timed by the tainter's own counter: a poller in one
# process (no curl per sample, so it takes little of the 2 cores) reads
# decisions_total every 5 ms from the tainter's start. The run is timed from
# the last sample that saw 0 decisions to the first that saw all N (so the
# figure errs low, by at most two polls), and not from "partitions assigned",
# which a log poll sees up to 100 ms late. CPU time of the whole process
# (every thread, librdkafka's too) over the same span, in ns from the
# scheduler (/proc/PID/task/*/schedstat), not /proc/PID/stat's 10 ms ticks.
# A count that stops moving for 2 s ends the run (the mock broker keeps a
# bounded log per partition: a larger EVENTS loses its oldest messages).
read -r t0 t1 decided_run c0 c1 < <(python3 - "$TPORT" "$PID" "$N" <<'PY'
import glob, sys, time, urllib.request
port, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = "http://127.0.0.1:%s/metrics" % port
def decided():
    try:
        text = urllib.request.urlopen(url, timeout=1).read().decode()
    except OSError:
        return None
    return int(sum(float(l.split()[-1]) for l in text.splitlines()
                   if l.startswith("faultline_tainter_decisions_total")))
def cpu_ns():
    total = 0
    for path in glob.glob("/proc/%s/task/*/schedstat" % pid):
        try:
            total += int(open(path).read().split()[0])
        except OSError:
            pass
    return total
deadline = time.monotonic() + 60
t0 = c0 = None
last, t_last = -1, time.monotonic()
while True:
    now = time.monotonic()
    d = decided()
    if d is None or d == 0:
        if now > deadline:
            sys.exit("the tainter decided nothing in 60 s")
        t0, c0 = now, cpu_ns()
    else:
        if d != last:
            last, t_last = d, now
        if d >= n or now - t_last > 2:
            break
    time.sleep(0.005)
print(t0, t_last, last, c0, cpu_ns())
PY
)
[[ $decided_run -ge $N ]] || echo "STALLED: $decided_run of $N decided; the rate below is over those" >&2
if [[ -n "${PERF_PID:-}" ]]; then
  kill -INT "$PERF_PID" 2>/dev/null || true
  wait "$PERF_PID" || true
fi
decided=$(metric "$TPORT" faultline_tainter_decisions_total)
outcomes=$(curl -sf "http://127.0.0.1:$TPORT/metrics" | awk '$1 ~ /^faultline_tainter_decisions_total/ {print $1 "=" $2}' | sed 's/faultline_tainter_decisions_total//' | tr '\n' ' ')
writes=$(curl -sf --cacert "$T/ca.pem" "$API_URL/debug/requests" | jq '[.[] | select(.method != "GET")] | length')
by_kind=$(curl -sf --cacert "$T/ca.pem" "$API_URL/debug/requests" |
  jq -r '[.[] | select(.method != "GET") | "\(.method) \(.path | sub("/[^/]*$"; "/…"))"] | group_by(.) | map("\(length) \(.[0])") | join(", ")')
e2e_stop tainter || true

python3 - "$N" "$a0" "$a1" "$t0" "$t1" "$decided" "$writes" "$((c1 - c0))" <<'PY'
import sys
n, a0, a1, t0, t1 = int(sys.argv[1]), *map(float, sys.argv[2:6])
decided, writes, cpu = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8]) / 1e9
print(f"events:                     {n} (half Xid 79 on an already-tainted node, half Xid 13 event-only)")
print(f"agent produce rate:         {n / (a1 - a0):>10,.0f} events/s ({a1 - a0:.2f} s, start to all delivered)")
print(f"tainter decide rate:        {decided / (t1 - t0):>10,.0f} events/s per replica ({t1 - t0:.2f} s, {cpu:.3f} s CPU)")
# Per CPU-second of the whole process (its librdkafka threads too): what one
# replica decides on one core, whatever else the machine runs.
print(f"tainter decide rate by CPU: {decided / max(cpu, 1e-9):>10,.0f} events per CPU-second ({cpu / max(decided, 1) * 1e6:.2f} us of CPU per event)")
print(f"Kubernetes writes:          {writes} ({writes / n:.5f} per event)")
PY
echo "writes by kind:             $by_kind"
echo "decisions by outcome:       $outcomes"
echo "load average:               $(cut -d' ' -f1-3 /proc/loadavg) (at the end; 2 cores shared)"
