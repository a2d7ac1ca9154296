#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault injection on the Kafka agent, with figures: fl-mockcluster (librdkafka's
# mock cluster as its own process) + faultline-agent following a file of Xid
# faults (one distinct PCI address per line) + kcat reading the topic back.
#
# usage: agent_chaos.sh BUILD_DIR SCENARIO
#   kills:  KILLS (10) SIGKILLs of the agent at random points (0-1.5 s after
#           each start, so also during start-up) while a writer appends faults.
#           After every kill: the saved checkpoint is never ahead of delivery
#           (every fault on a line before it is in the topic). At the end: every
#           fault delivered at least once, each re-sent copy with the same event
#           id (a consumer recognises it), per-node order kept.
#   outage: all brokers down for OUTAGE_S (1) seconds while faults keep coming
#           (FAULTS_PER_S, 200); the source's uncommitted-record limit is 500,
#           so the reader pauses (backpressure) and resumes where it was. Then:
#           nothing lost, per-node order, peak RSS (VmHWM) under MAX_HWM_MB (100).
#   leader_moves: every partition's leader moves between the 3 brokers
#           MOVES (10) times, every 0.5 s, while faults stream: nothing lost,
#           each fault with one id, per-node order kept.
#   state_dir: the state directory (its own tmpfs) full, then read-only:
#           checkpoint_save_failures_total counts it, the log names the
#           error, faults are still detected and delivered, and the
#           checkpoint moves on once the directory is writable again.
# Each prints one "figure:" line. The long variants are documented commands
# (tests/README.md, "Fault injection"): KILLS=100, OUTAGE_S=30 and 300.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../support/e2e_lib.sh
source "$SRC/tests/support/e2e_lib.sh"
e2e_init "$1" faultline-chaos
SCENARIO=$2
e2e_require kcat jq curl

mkdir -p "$T/rules"
: >"$T/faults.log"
cat >"$T/rules/test.yaml" <<'YAML'
pack: chaos
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: chaos.xid
    pattern: 'NVRM: Xid \((?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+), pid=(?P<n>\d+)'
    severity: critical
    action: taint
YAML

write_config() {  # $1: max_uncommitted_records
  cat >"$T/agent.yaml" <<YAML
node_name: chaos-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
shutdown_grace: 10s
suppression_window: 0s
suppression_max_folded: 100
suppression_flush_records: 100
checkpoint_interval: 100ms
queue: {max_uncommitted_records: $1}
rules: {builtin: false, paths: [$T/rules]}
sources:
  kmsg: {enabled: false}
  file:
    - {path: $T/faults.log, follow: true, origin: kernel}
kafka:
  brokers: "$BS"
  topic: events
  properties: {reconnect.backoff.max.ms: "200", log_level: "0"}
YAML
}

# fault N: one line; N is both the PCI address and the line number.
fault() { printf 'NVRM: Xid (%08x:3b:00): 79, pid=%d\n' "$1" "$1" >>"$T/faults.log"; }
# writer RATE: appends faults from $T/next on, RATE per second, until $T/stop exists.
writer() {
  local n=1 per=$(($1 / 20))
  ((per > 0)) || per=1
  while [[ ! -e "$T/stop" ]]; do
    for ((k = 0; k < per; k++)); do fault "$n"; n=$((n + 1)); done
    sleep 0.05
  done
}
# The fault numbers in the topic, in topic order (one partition per node key).
topic_ns() { e2e_topic events | cut -f3 | jq -r '.fields.n'; }
delivered() { topic_ns | sort -un | wc -l; }
has_all() { [[ $(delivered) -ge $1 ]]; }
# The checkpoint file: a format line, a hash line, then the JSON position.
saved_line() {
  local f
  for f in "$T"/state/file*.checkpoint; do
    [[ -f "$f" ]] && tail -n1 "$f" | jq -r '.line // 0' && return
  done
  echo 0
}
metric() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" '$1 == m {printf "%d\n", $2}'; }
metrics_port() { grep -o '"metrics_port":[0-9]*' "$T/agent.log" | tail -n1 | cut -d: -f2; }

# Per-node order: the first copy of each fault comes after the first copy of
# every fault written before it (re-sent copies after a kill are duplicates).
check_order() {
  topic_ns | awk '!seen[$1]++' | awk 'NR > 1 && $1 < prev { bad = 1; print "out of order: " prev " then " $1 } { prev = $1 } END { exit bad }' >&2
}

# Every fault has exactly one event id however often it was sent.
check_ids() {
  local want=$1 pairs
  pairs=$(e2e_topic events | cut -f3 | jq -r '(.fields.n) + " " + .id' | sort -u | wc -l)
  [[ $pairs -eq $want ]] || e2e_fail "$pairs (fault, id) pairs for $want faults: a re-sent event changed its id"
}

e2e_start_mock -b 3 -t events:4:3

case "$SCENARIO" in
kills)
  KILLS=${KILLS:-10}
  write_config 250000
  writer "${FAULTS_PER_S:-200}" &
  writer_pid=$!
  checked=0
  for ((k = 1; k <= KILLS; k++)); do
    e2e_start agent "$AGENT" --config "$T/agent.yaml"
    pid=$E2E_PID_agent
    sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", r / 32768 * 1.5 }')"
    if ! kill -9 "$pid" 2>/dev/null; then
      rc=0
      wait "$pid" || rc=$?
      e2e_fail "kill $k: the agent exited by itself (status $rc) before the SIGKILL"
    fi
    wait "$pid" 2>/dev/null || true
    # No checkpoint ahead of delivery: each fault before the saved line is in the topic.
    line=$(saved_line)
    if ((line > 0)); then
      got=$(topic_ns | awk -v l="$line" '$1 <= l' | sort -un | wc -l)
      [[ $got -eq $line ]] || e2e_fail "kill $k: checkpoint at line $line but only $got of those faults delivered"
      checked=$((checked + 1))
    fi
  done
  ((checked > 0)) || e2e_fail "no kill left a checkpoint to check"
  touch "$T/stop"
  wait "$writer_pid"
  N=$(wc -l <"$T/faults.log")
  t0=$SECONDS
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait 120 has_all "$N" || e2e_fail "only $(delivered) of $N faults delivered after $KILLS kills"
  recovery=$((SECONDS - t0))
  check_ids "$N"
  check_order || e2e_fail "per-node order broken"
  total=$(e2e_topic events | wc -l)
  echo "figure: kills=$KILLS faults=$N delivered=$N messages=$total duplicates=$((total - N)) (all recognised by event id) checkpoints_checked=$checked last_checkpoint_line=$line final_catch_up_s=$recovery"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
outage)
  OUTAGE_S=${OUTAGE_S:-1}
  RATE=${FAULTS_PER_S:-200}
  LIMIT=500
  MAX_HWM_MB=${MAX_HWM_MB:-100}
  write_config "$LIMIT"
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 10 agent '"msg":"started"'
  PORT=$(metrics_port)
  pid=$E2E_PID_agent
  for i in $(seq 1 100); do fault "$i"; done
  e2e_wait 15 has_all 100 || e2e_fail "100 faults not delivered before the outage"
  e2e_mock "down -1"
  # During the outage: at least LIMIT + 100 more faults, more if it is long.
  n=101
  end=$((SECONDS + OUTAGE_S))
  burst=$((RATE / 10))
  ((burst > 0)) || burst=1
  while ((SECONDS < end || n <= 100 + LIMIT + 100)); do
    for ((k = 0; k < burst; k++)); do fault "$n"; n=$((n + 1)); done
    sleep 0.1
  done
  written=$((n - 1))
  # Reported: kafka_up 0 (librdkafka notices when it next tries to send).
  e2e_wait 15 bash -c "[[ \$(curl -sf http://127.0.0.1:$PORT/metrics | awk '\$1 == \"faultline_agent_kafka_up\" {print \$2}') == 0 ]]" ||
    e2e_fail "kafka_up stayed 1 with every broker down"
  sleep 1  # let the reader reach its limit
  read_during=$(metric 'faultline_agent_source_lines_total{source="file"}')
  uncommitted=$(metric faultline_agent_uncommitted_records)
  # Backpressure: the reader stopped near its limit instead of reading (and
  # holding) everything; a batch (256 records) may overshoot it.
  ((read_during < 100 + LIMIT + 256 + 1)) || e2e_fail "read $read_during lines during the outage: the source did not pause at $LIMIT uncommitted"
  ((read_during < written)) || e2e_fail "the source read all $written lines: backpressure not exercised"
  e2e_mock "up -1"
  t0=$SECONDS
  e2e_wait 120 has_all "$written" || e2e_fail "only $(delivered) of $written faults delivered after the outage"
  recovery=$((SECONDS - t0))
  read_after=$(metric 'faultline_agent_source_lines_total{source="file"}')
  [[ $read_after -eq $written ]] || e2e_fail "the source read $read_after lines for $written: it did not resume where it was"
  check_ids "$written"
  check_order || e2e_fail "per-node order broken"
  hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  total=$(e2e_topic events | wc -l)
  echo "figure: outage_s=$OUTAGE_S faults=$written lost=0 messages=$total paused_at_lines=$read_during uncommitted_at_pause=$uncommitted catch_up_s=$recovery VmHWM_MiB=$((hwm_kb / 1024))"
  ((hwm_kb < MAX_HWM_MB * 1024)) || e2e_fail "VmHWM $((hwm_kb / 1024)) MiB >= $MAX_HWM_MB MiB"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
leader_moves)
  # Every partition's leader moves to the next broker (3 brokers, replication
  # factor 3) every 0.5 s, MOVES (10) times, while faults stream (200/s).
  # librdkafka's mock answers NOT_LEADER_OR_FOLLOWER from the old leader; the
  # idempotent producer refreshes its metadata and sends on to the new one.
  MOVES=${MOVES:-10}
  write_config 250000
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 10 agent '"msg":"started"'
  writer "${FAULTS_PER_S:-200}" &
  writer_pid=$!
  for ((m = 1; m <= MOVES; m++)); do
    sleep 0.5
    for p in 0 1 2 3; do e2e_mock "leader events $p $(((m + p) % 3 + 1))"; done
  done
  sleep 0.5
  touch "$T/stop"
  wait "$writer_pid"
  N=$(wc -l <"$T/faults.log")
  t0=$SECONDS
  e2e_wait 60 has_all "$N" || e2e_fail "only $(delivered) of $N faults delivered with $MOVES leader moves"
  catch_up=$((SECONDS - t0))
  check_ids "$N"
  check_order || e2e_fail "per-node order broken"
  moved=$(grep -c '^OK leader Success' "$T/mock.log" || true)
  total=$(e2e_topic events | wc -l)
  echo "figure: leader_moves=$MOVES (partition leader changes acknowledged: $moved) faults=$N lost=0 messages=$total duplicates=$((total - N)) catch_up_s=$catch_up"
  ((moved == MOVES * 4)) || e2e_fail "the mock acknowledged $moved of $((MOVES * 4)) leader moves"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
state_dir)
  # The state directory on its own 256 KiB tmpfs (needs root and mount).
  mkdir -p "$T/state"
  mount -t tmpfs -o size=256k tmpfs "$T/state" 2>/dev/null || { echo "SKIPPED: cannot mount a tmpfs"; exit 0; }
  unmount_state() { umount "$T/state" 2>/dev/null || true; }
  trap 'unmount_state; e2e_cleanup' EXIT
  write_config 250000
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 10 agent '"msg":"started"'
  PORT=$(metrics_port)
  failures() { metric 'faultline_agent_checkpoint_save_failures_total{source="file"}'; }
  fails_more_than() { [[ $(failures) -gt $1 ]]; }
  line_reaches() { [[ $(saved_line) -ge $1 ]]; }
  for i in $(seq 1 10); do fault "$i"; done
  e2e_wait 15 has_all 10 || e2e_fail "10 faults not delivered"
  e2e_wait 10 line_reaches 10 || e2e_fail "checkpoint not saved with space"
  # Full: the checkpoint cannot be written; detection and delivery go on.
  dd if=/dev/zero of="$T/state/filler" bs=4k 2>/dev/null || true
  for i in $(seq 11 20); do fault "$i"; done
  e2e_wait 15 has_all 20 || e2e_fail "faults not delivered with the state directory full"
  e2e_wait 10 fails_more_than 0 || e2e_fail "a full state directory is not counted in checkpoint_save_failures_total"
  full_failures=$(failures)
  grep '"msg":"checkpoint not saved; will retry"' "$T/agent.log" | grep -q 'No space left' || e2e_fail "no log line names the full disk"
  [[ $(saved_line) -eq 10 ]] || e2e_fail "checkpoint moved while the disk was full?"
  # Space again: the next save succeeds.
  rm -f "$T/state/filler"
  e2e_wait 10 line_reaches 20 || e2e_fail "checkpoint not saved once space came back"
  # Read-only: the same, with EROFS.
  mount -o remount,ro "$T/state" || e2e_fail "cannot remount read-only"
  for i in $(seq 21 30); do fault "$i"; done
  e2e_wait 15 has_all 30 || e2e_fail "faults not delivered with the state directory read-only"
  e2e_wait 10 fails_more_than "$full_failures" || e2e_fail "a read-only state directory is not counted"
  grep '"msg":"checkpoint not saved; will retry"' "$T/agent.log" | grep -q 'Read-only' || e2e_fail "no log line names the read-only file system"
  mount -o remount,rw "$T/state"
  e2e_wait 10 line_reaches 30 || e2e_fail "checkpoint not saved once writable again"
  echo "figure: state_dir full then read-only: faults=30 delivered=30 checkpoint_save_failures=$(failures) (logged with the errno text), checkpoint resumed at line $(saved_line)"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
