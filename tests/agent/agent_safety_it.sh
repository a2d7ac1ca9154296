#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-process regression tests for issue 11's agent defects: fl-mockcluster
# (Kafka) + faultline-agent reading a pod-log tree + kcat reading the topic.
#
# usage: agent_safety_it.sh BUILD_DIR SCENARIO
#   podlog_ids: a pending P chunk on stdout while three IB errors arrive on
#               stderr; the three events must have three distinct ids (11.5).
#   memory:     LINES (200) distinct 250 KiB NCCL WARN lines from one pod: every
#               one becomes an event, and the agent's peak RSS (VmHWM) stays
#               under MAX_HWM_MB (100) (11.4; bench/README.md has the full size).
#   no_libcurl: an agent publishing to Kafka has not loaded libcurl (nor its
#               GnuTLS, Kerberos, LDAP): only --standalone talks to the API
#               server, and loading them cost every node ~3.7 MiB (issue 12.5).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../support/e2e_lib.sh
source "$SRC/tests/support/e2e_lib.sh"
e2e_init "$1" faultline-agent-safety
SCENARIO=$2
e2e_require kcat jq curl

POD_DIR="$T/pods/train_trainer-0_uid-0/main"
mkdir -p "$POD_DIR" "$T/rules"
cat >"$T/rules/test.yaml" <<'YAML'
pack: agent-safety-it
version: 1
defaults: {sources: [pod], category: network}
rules:
  - id: it.ib_completion
    pattern: 'mlx5: completion error on qp (?P<qp>\d+)'
    severity: error
    action: event
  - id: it.nccl_warn  # as the built-in nccl.warn: the whole rest of the line captured
    pattern: '(?:(?P<host>[\w.-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<device>\d+)\] (?:[\w./-]+:\d+ )?)?NCCL WARN (?P<message>.+)'
    severity: info
    action: event
    summary: 'NCCL WARN{? on device {device}}: {message}'
YAML

write_config() {  # $1: suppression window (default 0s)
  cat >"$T/agent.yaml" <<YAML
node_name: it-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
shutdown_grace: 10s
suppression_window: ${1:-0s}
checkpoint_interval: 200ms
rules: {builtin: false, paths: [$T/rules]}
sources:
  kmsg: {enabled: false}
  podlog: {enabled: true, root: $T/pods, rescan_interval: 100ms, read_interval: 50ms}
kafka:
  brokers: "$BS"
  topic: events
  properties: {reconnect.backoff.max.ms: "200", log_level: "0"}
YAML
}

start_agent() {
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 10 agent '"msg":"started"'
}

count_rule() { e2e_topic events | cut -f3 | jq -r --arg r "$1" 'select(.rule == $r) | .id' | wc -l; }
has_rule() { [[ $(count_rule "$1") -ge $2 ]]; }

e2e_start_mock -b 3 -t events:4:3

case "$SCENARIO" in
podlog_ids)
  write_config
  # A progress bar on stdout (P chunks, its F not yet written) and three IB
  # completion errors on stderr, as in the report.
  {
    echo "2026-11-24T10:00:00.000000001Z stdout P epoch 1: [=====     ] 50% "
    echo "2026-11-24T10:00:00.100000000Z stdout P [=======   ] 70% "
    for qp in 101 102 103; do
      echo "2026-11-24T10:00:01.000000000Z stderr F mlx5: completion error on qp $qp"
    done
  } >"$POD_DIR/0.log"
  start_agent
  e2e_wait 15 has_rule it.ib_completion 3 || e2e_fail "3 IB events not delivered"
  ids=$(e2e_topic events | cut -f3 | jq -r 'select(.rule == "it.ib_completion") | .id' | sort -u | wc -l)
  [[ $ids -eq 3 ]] || e2e_fail "3 events share $ids distinct id(s): the tainter drops the rest as duplicates"
  # A restart re-reads them (the pending chunk lies before them): same ids.
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  start_agent
  e2e_wait 15 has_rule it.ib_completion 6 || e2e_fail "re-sent events not delivered"
  ids=$(e2e_topic events | cut -f3 | jq -r 'select(.rule == "it.ib_completion") | .id' | sort -u | wc -l)
  [[ $ids -eq 3 ]] || e2e_fail "re-sent events changed their ids ($ids distinct ids)"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
memory)
  LINES=${LINES:-200}
  MAX_HWM_MB=${MAX_HWM_MB:-100}
  # The suppressor on (distinct lines: every one a new key), as deployed.
  write_config 60s
  # containerd writes a 250 KiB line as 16 KiB P chunks and a final F.
  awk -v n="$LINES" 'BEGIN {
    pad = "x"; while (length(pad) < 16384) pad = pad pad; pad = substr(pad, 1, 16384)
    for (i = 0; i < n; i++) {
      line = sprintf("gpu-1:100:200 [%d] NCCL WARN distinct-%06d ", i % 8, i)
      while (length(line) < 250 * 1024) line = line pad
      line = substr(line, 1, 250 * 1024)
      for (p = 1; p <= length(line); p += 16384) {
        tag = (p + 16384 > length(line)) ? "F" : "P"
        printf "2026-11-24T10:00:00.%09dZ stdout %s %s\n", i, tag, substr(line, p, 16384)
      }
    }
  }' >"$POD_DIR/0.log"
  start_agent
  pid=$E2E_PID_agent
  e2e_wait 120 has_rule it.nccl_warn "$LINES" || e2e_fail "not every NCCL WARN became an event ($(count_rule it.nccl_warn) of $LINES)"
  hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  echo "memory: $LINES x 250 KiB lines -> $(count_rule it.nccl_warn) events, VmHWM $((hwm_kb / 1024)) MiB"
  ((hwm_kb < MAX_HWM_MB * 1024)) || e2e_fail "VmHWM $((hwm_kb / 1024)) MiB >= $MAX_HWM_MB MiB"
  # Bounded events: the message, captures and summary are cut.
  biggest=$(e2e_topic events | cut -f3 | awk '{ if (length($0) > m) m = length($0) } END { print m }')
  ((biggest < 16384)) || e2e_fail "an event of $biggest bytes"
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
no_libcurl)
  write_config
  start_agent
  maps=$(cat "/proc/$E2E_PID_agent/maps")
  [[ $maps == *librdkafka* ]] || e2e_fail "the maps of the agent are not readable: $maps"
  if grep -E 'libcurl|libgnutls|libkrb5|libldap' <<<"$maps"; then
    e2e_fail "a Kafka-mode agent loaded the Kubernetes client's HTTP stack (above)"
  fi
  e2e_stop agent || e2e_fail "agent did not stop cleanly"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
