#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tainter's state model with real processes: fl-mockcluster (Kafka),
# fl-fake-apiserver (Kubernetes, with watch), faultline-tainter replicas,
# `faultline-tainter untaint` and kubectl-style PATCHes by hand.
#
# usage: state_test.sh BUILD_DIR SCENARIO
#   hand_untaint   (issue 11.1) a taint lifted by hand stays lifted when another
#                  reason of that node expires, and the valve stops counting it.
#   shared_valve   (issue 11.3) two replicas share max_fraction: faults on all
#                  nodes at once, split over both replicas' partitions, taint one.
#   valve_restart  (issue 11.3) a restart keeps max_new_taints' window.
#   api_outage     (issue 11.9) an API outage longer than max.poll.interval.ms
#                  does not drop the tainter from the consumer group; the taint
#                  lands after recovery.
#   list_fails_at_start (issue 11.3) while the first node list fails, nothing
#                  is consumed (the valve has no counts yet): no partition is
#                  assigned and no taint lands; once the list answers, the
#                  waiting event is decided.
#
# API-double semantics relied on (as kube-apiserver): a list carries its
# resourceVersion and a watch from it streams every later change (ADDED /
# MODIFIED / DELETED JSON lines), so a PATCH by someone else reaches the
# tainter's watch; a JSON Patch `remove /spec/taints/0` removes exactly that
# taint and bumps the node's resourceVersion. A coordination.k8s.io Lease is
# created once (POST; a second POST is 409) and replaced with PUT carrying
# metadata.resourceVersion (a stale one is 409), which is what lets replicas
# share the valve's record optimistically.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-state
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
TAINT_KEY=faultline.dev/faulty
ANNOTATION=faultline.dev/reasons
TOKEN=fl-test-token

# ---- helpers ------------------------------------------------------------------
has_taint() {
  e2e_node "$1" | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 1' >/dev/null
}
lacks_taint() { ! has_taint "$1"; }
reason_count() { e2e_node "$1" | jq --arg a "$ANNOTATION" '.metadata.annotations[$a] // "[]" | fromjson | length'; }
has_reasons() { [[ $(reason_count "$1") == "$2" ]]; }
# event NODE RULE EXPIRE [ID]: one taint event on the events topic, key = node,
# as an agent on state_test_rules.yaml publishes it (the tainter checks it
# against that rule: RULE's expire must be EXPIRE).
event() {
  local now id=${4:-$RUN-$1-$2-$RANDOM}
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg id "$id" --arg n "$1" --arg r "$2" --arg e "$3" --arg t "$now" \
    '{schema: 1, id: $id, node: $n, source: "kmsg", origin: "kernel", rule: $r, category: "test", severity: "critical",
      action: "taint", summary: ($r + " on " + $n), message: "test line", log_time: $t, detected_time: $t}
     + (if $e == "" then {} else {expire: $e} end)' |
    kcat -P -b "$BS" -t events -k "$1" 2>/dev/null || e2e_fail "kcat -P failed"
}
# tainter_config NAME [VALVE_YAML [KAFKA_PROPERTIES]]: writes $T/NAME.yaml.
tainter_config() {
  local valve=${2:-}
  [[ -n "$valve" ]] || valve='valve: {event_interval: 1ms, max_fraction: 0.1, min_allowed: 1}'
  cat >"$T/$1.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-state-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"${3:-}}
kubernetes: {kubeconfig: $T/kubeconfig}
rules: {builtin: true, paths: [$HERE/state_test_rules.yaml]}
$valve
metrics_address: 127.0.0.1:0
YAML
}
# tainter NAME [VALVE_YAML [KAFKA_PROPERTIES]]: a tainter replica, started and
# given its partitions.
tainter() {
  tainter_config "$@"
  e2e_start "$1" "$TAINTER" --config "$T/$1.yaml"
  e2e_wait_log 30 "$1" '"msg":"partitions assigned"'
}
# remove_taint_by_hand NODE: what `kubectl taint nodes NODE KEY-` sends: a JSON
# Patch removing faultline's taint (it is the node's only taint here).
remove_taint_by_hand() {
  curl -sf --max-time 5 --cacert "$T/ca.pem" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json-patch+json' -X PATCH \
    --data '[{"op":"remove","path":"/spec/taints/0"}]' "$API_URL/api/v1/nodes/$1" >/dev/null ||
    e2e_fail "PATCH $1 failed"
}

NODES=()
for i in $(seq 0 9); do NODES+=(--node "gpu-$i"); done
e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
e2e_start_api "${NODES[@]}"

case "$SCENARIO" in
hand_untaint)
  # 10 nodes, max_fraction 0.1: one faultline taint at a time.
  tainter tainter
  event gpu-1 test.short 6s
  event gpu-1 test.long 10m
  e2e_wait 20 has_reasons gpu-1 2 || e2e_fail "gpu-1 was not tainted with two reasons"
  has_taint gpu-1 || e2e_fail "gpu-1 has no taint"
  SHORT_EXPIRES=$((SECONDS + 6))

  # Lifted by hand with the CLI: taint and annotation go.
  "$TAINTER" untaint gpu-1 --reason "state test" --config "$T/tainter.yaml" >>"$T/cli.log" 2>&1 ||
    e2e_fail "untaint failed"
  lacks_taint gpu-1 || e2e_fail "untaint left the taint"

  # The valve no longer counts gpu-1: a fault on gpu-2 taints it.
  event gpu-2 test.long 10m
  e2e_wait 15 has_taint gpu-2 ||
    e2e_fail "gpu-2 was not tainted: the valve still counts the node lifted by hand"
  # Removed by hand the kubectl way (taint only, the annotation stays).
  remove_taint_by_hand gpu-2
  event gpu-3 test.long 10m
  e2e_wait 15 has_taint gpu-3 ||
    e2e_fail "gpu-3 was not tainted: the valve still counts gpu-2 after kubectl removed its taint"

  # test.short expires: gpu-1's other reason must not bring the taint back.
  while ((SECONDS < SHORT_EXPIRES + 4)); do
    lacks_taint gpu-1 || e2e_fail "the taint lifted by hand came back when another reason expired"
    lacks_taint gpu-2 || e2e_fail "gpu-2's taint removed by hand came back"
    sleep 0.5
  done
  e2e_log_has tainter '"msg":"safety valve refused a taint"' && e2e_fail "the valve refused a taint"
  ;;
shared_valve)
  # 10 nodes, max_fraction 0.1: one faultline taint at a time, fleet-wide.
  tainter tainter
  tainter tainter-b
  sleep 2  # the first replica's rebalance after the second joined
  for i in $(seq 0 9); do event "gpu-$i" test.long 10m; done
  tainted() {
    local n=0 i
    for i in $(seq 0 9); do has_taint "gpu-$i" && n=$((n + 1)); done
    echo $n
  }
  # Every event decided: one taint or one refusal (its log line) per node.
  all_decided() {
    [[ $(cat "$T/tainter.log" "$T/tainter-b.log" |
      grep -c '"msg":"safety valve refused a taint"\|"msg":"tainted node"') -ge 10 ]]
  }
  e2e_wait 40 all_decided || e2e_fail "not every event was decided"
  [[ $(tainted) == 1 ]] || e2e_fail "$(tainted) nodes tainted; the fleet's limit is 1"
  e2e_log_has tainter '"msg":"tainted node"' && e2e_log_has tainter-b '"msg":"tainted node"' &&
    e2e_fail "both replicas tainted a node"
  e2e_stop tainter-b || e2e_fail "tainter-b exited with $?"
  ;;
valve_restart)
  # max_new_taints 2 per 10m; the fractions do not limit here.
  VALVE="valve: {event_interval: 1ms, max_fraction: 1.0, per_rule_max_fraction: 1.0, max_new_taints: 2, window: 10m}"
  tainter tainter "$VALVE"
  event gpu-1 test.long 10m
  event gpu-2 test.long 10m
  e2e_wait 20 has_taint gpu-2 || e2e_fail "gpu-2 was not tainted"
  e2e_wait 20 has_taint gpu-1 || e2e_fail "gpu-1 was not tainted"
  e2e_stop tainter || e2e_fail "tainter exited with $?"
  # A restart (same group): the window's two new taints are remembered.
  mv "$T/tainter.log" "$T/tainter-1.log"
  tainter tainter "$VALVE"
  event gpu-3 test.long 10m
  e2e_wait_log 30 tainter '"msg":"safety valve refused a taint"'
  lacks_taint gpu-3 || e2e_fail "a restart reset max_new_taints: gpu-3 was tainted"
  grep -q 'max_new_taints' "$T/tainter.log" || e2e_fail "the refusal does not name max_new_taints"
  ;;
api_outage)
  # librdkafka drops a member that does not poll within max.poll.interval.ms.
  tainter tainter "" ', max.poll.interval.ms: "8000"'
  debug() { curl -sf --max-time 5 --cacert "$T/ca.pem" -X "$1" -d '' "$API_URL/debug/fail$2" >/dev/null; }
  # Every API request fails with 503 from now on (the open watch stays open).
  debug POST '?status=503&count=1000000' || e2e_fail "cannot inject the outage"
  event gpu-1 test.long 10m
  sleep 20  # 2.5 x max.poll.interval.ms of outage
  lacks_taint gpu-1 || e2e_fail "tainted during the outage?"
  debug DELETE '' || e2e_fail "cannot end the outage"
  e2e_wait 40 has_taint gpu-1 || e2e_fail "the taint did not land after the outage"
  grep -q 'maximum poll interval' "$T/tainter.log" &&
    e2e_fail "the tainter exceeded max.poll.interval.ms during the outage"
  e2e_log_has tainter '"msg":"partitions revoked"' && e2e_fail "the tainter lost its partitions"
  ;;
list_fails_at_start)
  fail_debug() { curl -sf --max-time 5 --cacert "$T/ca.pem" -X "$1" -d '' "$API_URL/debug/fail$2" >/dev/null; }
  # Every GET under /api/v1/nodes (the list, and the watch that follows it)
  # answers 503 until the outage ends, as kube-apiserver does behind a
  # failing load balancer.
  fail_debug POST '?status=503&count=1000000&method=GET&path=/api/v1/nodes' ||
    e2e_fail "cannot inject the outage"
  event gpu-1 test.long 10m
  tainter_config tainter
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  sleep 8  # several list retries; a consumer would have joined within ~3 s
  e2e_log_has tainter '"msg":"partitions assigned"' &&
    e2e_fail "the tainter consumed before it could list the nodes"
  lacks_taint gpu-1 || e2e_fail "tainted without a node list"
  fail_debug DELETE '' || e2e_fail "cannot end the outage"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
  e2e_wait 30 has_taint gpu-1 || e2e_fail "the waiting event was not decided after the list answered"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
e2e_stop tainter || e2e_fail "tainter exited with $?"
echo "PASS: $SCENARIO"
