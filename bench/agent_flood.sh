#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Agent flood benchmark: a dying GPU logs the same Xid line LINES times
# (default 1,000,000). faultline-agent reads them from a file source, matches
# each, folds the repeats and publishes a handful of events to a mock Kafka
# cluster (fl-mockcluster); kcat reads the topic back to check that the
# events' `suppressed` totals account for every line. CPU time and peak RSS
# come from /usr/bin/time -v on the agent process.
#
# usage: bench/agent_flood.sh BUILD_DIR [LINES]     (use a RelWithDebInfo/Release build)
#   FL_AGENT=BINARY   another faultline-agent binary (before/after runs)
#   FL_BENCH_AGENT_YAML='queue: {max_queued_batches: 8}'   appended to the agent's config
set -euo pipefail

BUILD=${1:?usage: agent_flood.sh BUILD_DIR [LINES]}
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_prepare "$BUILD" faultline-agent fl-mockcluster
LINES=${2:-1000000}
AGENT=${FL_AGENT:-$BUILD/collector/faultline-agent}
MOCK=$BUILD/tests/support/fl-mockcluster
T=$(mktemp -d "${TMPDIR:-/tmp}/faultline-flood-XXXXXX")
MOCK_PID=""
TIME_PID=""
cleanup() {
  [[ -n "$TIME_PID" ]] && kill -9 "$TIME_PID" 2>/dev/null || true
  [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT

mkfifo "$T/ctl"
"$MOCK" -b 3 -t events:4:3 -f "$T/bootstrap" <"$T/ctl" >"$T/mock.out" 2>&1 &
MOCK_PID=$!
exec 3>"$T/ctl"
for _ in $(seq 100); do [[ -s "$T/bootstrap" ]] && break; sleep 0.1; done
BS=$(cat "$T/bootstrap")

awk -v n="$LINES" 'BEGIN { for (i = 0; i < n; i++)
  printf "[%d.%06d] NVRM: Xid (PCI:0000:3b:00): 95, pid=4242, name=python3, Uncontained ECC error\n", 1000 + i / 1000, i % 1000000 }' \
  >"$T/flood.log"

cat >"$T/agent.yaml" <<YAML
node_name: flood-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
suppression_window: 60s
rules: {builtin: true}
sources:
  kmsg: {enabled: false}
  file: [{path: $T/flood.log, follow: true, origin: kernel}]
kafka: {brokers: "$BS", topic: events, properties: {log_level: "0"}}
${FL_BENCH_AGENT_YAML:-}
YAML

start=$(date +%s.%N)
/usr/bin/time -v -o "$T/time.txt" "$AGENT" --config "$T/agent.yaml" 2>"$T/agent.log" &
TIME_PID=$!
for _ in $(seq 100); do grep -q '"msg":"started"' "$T/agent.log" && break; sleep 0.1; done
PORT=$(grep -o '"metrics_port":[0-9]*' "$T/agent.log" | cut -d: -f2)
lines_read() {
  curl -sf "http://127.0.0.1:$PORT/metrics" |
    awk '$1 == "faultline_agent_source_lines_total{source=\"file\"}" {print $2}'
}
matched() {
  curl -sf "http://127.0.0.1:$PORT/metrics" |
    awk '$1 ~ /^faultline_agent_matches_total/ {n += $2} END {print n + 0}'
}
until [[ $(lines_read || echo 0) -ge $LINES ]]; do sleep 0.05; done
# A source may count lines before it returns them: wait until matching stops.
prev=-1
until [[ $(matched) -eq $prev ]]; do prev=$(matched); sleep 0.3; done
read_done=$(date +%s.%N)
kill -TERM "$(pgrep -P "$TIME_PID")"
wait "$TIME_PID"
TIME_PID=""

kcat -C -b "$BS" -t events -o beginning -e -q -f '%s\n' >"$T/topic" 2>/dev/null
events=$(wc -l <"$T/topic")
# Per rule: the events' 1 + suppressed must add up to every line (a line may
# match more than one rule, e.g. the Xid catalog and a generic NVRM rule).
# Only the flood file's events: the agent's active checks run as shipped and
# publish their first round's summary (check.round, source "check") when it
# ends, inside the flood or after it, by their jitter.
covered=$(jq -s -c 'map(select(.source == "file")) | group_by(.rule) | map({(.[0].rule): (map(1 + .suppressed) | add)}) | add' "$T/topic")
rules=$(jq -r '.rule' "$T/topic" | sort | uniq -c | tr '\n' ';')
user=$(awk -F': ' '/User time/ {print $2}' "$T/time.txt")
sys=$(awk -F': ' '/System time/ {print $2}' "$T/time.txt")
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/time.txt")
secs=$(awk -v a="$read_done" -v b="$start" 'BEGIN { printf "%.3f", a - b }')

echo "lines:            $LINES"
echo "events in topic:  $events ($rules)"
echo "lines covered:    $covered (per rule: sum of 1 + suppressed)"
echo "read+match wall:  ${secs}s  ($(awk -v n="$LINES" -v s="$secs" 'BEGIN { printf "%d", n / s }') lines/s, incl. startup)"
echo "agent CPU:        user ${user}s, sys ${sys}s"
echo "agent peak RSS:   ${rss} KiB"
echo "load average:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at the end: 2 cores shared)"
jq -e --argjson n "$LINES" 'all(.[]; . == $n)' <<<"$covered" >/dev/null ||
  { echo "FAIL: totals do not add up" >&2; exit 1; }
