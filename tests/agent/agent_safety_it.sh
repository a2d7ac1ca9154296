#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Multi-process regression tests for issue 11's agent defects: fl-mockcluster
# (Kafka) + faultline-agent reading a pod-log tree + kcat reading the topic.
#
# usage: agent_safety_it.sh BUILD_DIR SCENARIO
#   podlog_ids: a pending P chunk on stdout while three IB errors arrive on
#               stderr; the three events must have three distinct ids (11.5).
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
  - id: it.nccl_warn
    pattern: 'NCCL WARN (?P<what>\S+)'
    severity: warning
    action: event
YAML

write_config() {
  cat >"$T/agent.yaml" <<YAML
node_name: it-node
state_dir: $T/state
metrics_address: 127.0.0.1:0
shutdown_grace: 10s
suppression_window: 0s
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
write_config

case "$SCENARIO" in
podlog_ids)
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
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
