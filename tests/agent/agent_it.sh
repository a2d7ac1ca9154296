#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-process tests of faultline-agent: fl-mockcluster (librdkafka's mock
# Kafka cluster as its own process) + faultline-agent with a file source +
# kcat reading the topic back.
#
# usage: agent_it.sh BUILD_DIR SCENARIO     SCENARIO: basic_outage | crash | flood | reload
set -euo pipefail

BUILD=$1
SCENARIO=$2
for tool in kcat jq curl; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 0; }
done
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AGENT=$BUILD/collector/faultline-agent
MOCK=$BUILD/tests/support/fl-mockcluster
T=$(mktemp -d "${TMPDIR:-/tmp}/faultline-agent-it-XXXXXX")
MOCK_PID=""
AGENT_PID=""

cleanup() {
  [[ -n "$AGENT_PID" ]] && kill -9 "$AGENT_PID" 2>/dev/null || true
  [[ -n "$MOCK_PID" ]] && kill "$MOCK_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "--- agent log (tail) ---" >&2
  tail -n 30 "$T/agent.log" >&2 2>/dev/null || true
  exit 1
}

# Polls a command until it succeeds, at most $1 seconds.
wait_for() {
  local secs=$1
  shift
  local end=$((SECONDS + secs))
  until "$@"; do
    ((SECONDS < end)) || return 1
    sleep 0.1
  done
}

start_mock() {
  mkfifo "$T/ctl"
  "$MOCK" -b 3 -t events:4:3 -f "$T/bootstrap" <"$T/ctl" >"$T/mock.out" 2>&1 &
  MOCK_PID=$!
  exec 3>"$T/ctl"  # hold the control fifo open
  wait_for 10 test -s "$T/bootstrap" || fail "mock cluster did not start"
  BS=$(cat "$T/bootstrap")
}

mock() { echo "$*" >&3; }

write_rules() {
  mkdir -p "$T/rules"
  cat >"$T/rules/test.yaml" <<'YAML'
pack: agent-it
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: it.xid
    pattern: 'NVRM: Xid \((?P<pci>[0-9a-f:.]+)\): (?P<xid>\d+)'
    severity: critical
    action: taint
    summary: 'Xid {xid} on {pci}'
YAML
}

write_config() {  # $1: suppression window
  cat >"$T/agent.yaml" <<YAML
node_name: it-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
shutdown_grace: 10s
suppression_window: $1
checkpoint_interval: 200ms
rules:
  builtin: false
  paths: [$T/rules]
  reload_debounce: 100ms
sources:
  kmsg: {enabled: false}
  file:
    - {path: $T/faults.log, follow: true, origin: kernel}
kafka:
  brokers: "$BS"
  topic: events
  properties:
    reconnect.backoff.max.ms: "200"
    log_level: "0"
YAML
}

start_agent() {
  "$AGENT" --config "$T/agent.yaml" 2>>"$T/agent.log" &
  AGENT_PID=$!
  wait_for 10 grep -q '"msg":"started"' "$T/agent.log" || fail "agent did not start"
  PORT=$(grep -o '"metrics_port":[0-9]*' "$T/agent.log" | tail -n1 | cut -d: -f2)
}

stop_agent() {  # expects exit code $1
  kill -TERM "$AGENT_PID"
  local rc=0
  wait "$AGENT_PID" || rc=$?
  AGENT_PID=""
  [[ $rc -eq $1 ]] || fail "agent exited with $rc, expected $1"
}

fault() {  # $1: number -> a distinct PCI address
  printf 'NVRM: Xid (%04x:3b:00): 79, pid=%d\n' "$1" "$1" >>"$T/faults.log"
}

# The topic as "key<TAB>headers<TAB>value" lines.
topic() { kcat -C -b "$BS" -t events -o beginning -e -q -f '%k\t%h\t%s\n' 2>/dev/null; }
count_distinct_pci() { topic | cut -f3 | jq -r '.fields.pci' | sort -u | wc -l; }
has_distinct() { [[ $(count_distinct_pci) -ge $1 ]]; }
checkpoint() { cat "$T"/state/file*.checkpoint 2>/dev/null || true; }
metric() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

touch "$T/faults.log"
start_mock
write_rules

case "$SCENARIO" in
basic_outage)
  write_config 0s
  start_agent
  for i in $(seq 1 10); do fault "$i"; done
  wait_for 15 has_distinct 10 || fail "10 events not delivered"
  topic >"$T/topic1"
  [[ $(wc -l <"$T/topic1") -eq 10 ]] || fail "expected 10 messages"
  while IFS=$'\t' read -r key headers value; do
    [[ "$key" == it-node ]] || fail "key '$key'"
    [[ "$headers" == *schema=1* && "$headers" == *rule=it.xid* ]] || fail "headers '$headers'"
    [[ $(jq -r '.node + " " + .rule + " " + (.schema|tostring) + " " + .source' <<<"$value") == "it-node it.xid 1 file" ]] ||
      fail "value $value"
  done <"$T/topic1"
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || fail "not ready with Kafka up"
  # Let the checkpoint settle on line 10, then take every broker down.
  sleep 1
  before=$(checkpoint)
  [[ -n "$before" ]] || fail "no checkpoint written"
  mock "down -1"
  for i in $(seq 11 20); do fault "$i"; done
  wait_for 15 bash -c "! curl -sf http://127.0.0.1:$PORT/readyz >/dev/null" || fail "still ready during the outage"
  sleep 2
  [[ "$(checkpoint)" == "$before" ]] || fail "checkpoint advanced during the outage"
  mock "up -1"
  wait_for 30 has_distinct 20 || fail "events written during the outage not delivered"
  wait_for 10 bash -c "[[ \"\$(cat $T/state/file*.checkpoint)\" != '$before' ]]" || fail "checkpoint did not advance after the outage"
  wait_for 10 curl -sf "http://127.0.0.1:$PORT/readyz" -o /dev/null || fail "not ready again"
  [[ $(metric 'faultline_agent_events_total{outcome="delivered"}') -eq 20 ]] || fail "delivered metric"
  # Every message validates against the published schema.
  topic | cut -f3 >"$T/values"
  "$SRC/tests/schema/validate_events.py" --min 20 "$T/values" || fail "events do not match the schema"
  stop_agent 0
  ;;
crash)
  write_config 0s
  start_agent
  N=300
  (for i in $(seq 1 $N); do fault "$i"; sleep 0.005; done) &
  writer=$!
  wait_for 15 has_distinct 50 || fail "no events before the kill"
  kill -9 "$AGENT_PID"
  wait "$AGENT_PID" 2>/dev/null || true
  AGENT_PID=""
  wait "$writer"
  start_agent
  wait_for 30 has_distinct $N || fail "not every fault reached the topic after the restart"
  # Re-sent events carry the same id: one id per PCI address.
  pairs=$(topic | cut -f3 | jq -r '.fields.pci + " " + .id' | sort -u | wc -l)
  [[ $pairs -eq $N ]] || fail "a re-sent event changed its id ($pairs ids for $N faults)"
  echo "messages in topic: $(topic | wc -l) for $N faults"
  stop_agent 0
  ;;
flood)
  LINES=${FLOOD_LINES:-100000}
  write_config 60s
  awk -v n="$LINES" 'BEGIN { for (i = 0; i < n; i++) print "NVRM: Xid (0000:3b:00): 95, pid=1, Uncontained ECC error" }' >"$T/faults.log"
  start_agent
  # Every line matched (a source may count lines it has not returned yet).
  wait_for 60 bash -c "[[ \$(curl -sf http://127.0.0.1:$PORT/metrics | awk '\$1 == \"faultline_agent_matches_total{rule=\\\"it.xid\\\"}\" {print \$2}') -ge $LINES ]]" ||
    fail "the flood was not matched"
  stop_agent 0
  topic >"$T/topic"
  events=$(wc -l <"$T/topic")
  covered=$(cut -f3 "$T/topic" | jq -s 'map(1 + .suppressed) | add')
  echo "flood: $LINES lines -> $events events covering $covered lines"
  [[ $covered -eq $LINES ]] || fail "suppressed totals cover $covered lines, expected $LINES"
  [[ $events -le 20 ]] || fail "$events events is not a handful"
  ;;
reload)
  write_config 0s
  start_agent
  fault 1
  wait_for 15 has_distinct 1 || fail "first event not delivered"
  # A broken pack: the running rules stay and the failure is counted.
  cat >"$T/rules/broken.yaml" <<'YAML'
pack: broken
rules:
  - id: it.broken
    pattern: 'unclosed (group'
YAML
  wait_for 10 bash -c "[[ \$(curl -sf http://127.0.0.1:$PORT/metrics | awk '\$1 == \"faultline_agent_rule_reloads_total{result=\\\"failure\\\"}\" {print \$2}') -ge 1 ]]" ||
    fail "broken pack not reported as a failed reload"
  grep -q 'reload failed' "$T/agent.log" || fail "no diagnostic logged"
  fault 2
  wait_for 15 has_distinct 2 || fail "old rules stopped matching after a broken reload"
  # A fix, swapped in like a ConfigMap update (SIGHUP as well, to be sure both paths work).
  rm "$T/rules/broken.yaml"
  cat >"$T/rules/extra.yaml" <<'YAML'
pack: extra
version: 1
defaults: {sources: [kernel], category: hardware}
rules:
  - id: it.ecc
    pattern: 'ECC error on (?P<pci>[0-9a-f:.]+)'
    severity: error
    action: event
YAML
  kill -HUP "$AGENT_PID"
  wait_for 10 bash -c "[[ \$(curl -sf http://127.0.0.1:$PORT/metrics | awk '\$1 == \"faultline_agent_rule_reloads_total{result=\\\"success\\\"}\" {print \$2}') -ge 1 ]]" ||
    fail "valid pack not reloaded"
  echo "ECC error on 0000:aa:00" >>"$T/faults.log"
  wait_for 15 bash -c "kcat -C -b '$BS' -t events -o beginning -e -q 2>/dev/null | grep -q '\"rule\":\"it.ecc\"'" ||
    fail "the new rule does not match"
  stop_agent 0
  ;;
*)
  fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
