#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault injection on the tainter, with figures: fl-mockcluster (Kafka),
# fl-fake-apiserver (Kubernetes, with watch), faultline-tainter replicas.
#
# usage: tainter_chaos.sh BUILD_DIR SCENARIO
#   kill_rebalance: 3 replicas in one group; a burst of one taint event per
#           node (NODES, 30) in two waves; one replica SIGKILLed right after
#           its first taint, the survivors take its partitions. Every node ends
#           with exactly one faultline taint and one reason; no node was
#           tainted twice ("tainted node" once per node over all replicas).
#   api_faults: the API server answers every request 503 for OUTAGE_S/2 s,
#           then 429 with Retry-After: 2 for OUTAGE_S/2 s (OUTAGE_S 10; the
#           documented command 60) while taint events arrive: nothing is
#           tainted during it, every node is after it, the tainter's request
#           rate stays bounded (backoff, no storm) and its VmHWM is reported.
#
# API-double semantics relied on (as kube-apiserver): a list carries its
# resourceVersion and a watch from it streams every later change, so each
# replica sees the others' taints; an injected fault answers the request with
# that status (429 with a Retry-After header) before authentication, as an
# overloaded apiserver or its load balancer does; every request, failed or
# not, is recorded with its time (/debug/requests).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-tainter-chaos
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
TAINT_KEY=faultline.dev/faulty
ANNOTATION=faultline.dev/reasons

# event NODE ID: one taint event without expiry (a hardware fault), key = node.
event_line() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  printf '%s:{"schema":1,"id":"%s","node":"%s","source":"kmsg","origin":"kernel","rule":"chaos.xid","severity":"critical","action":"taint","summary":"Xid 79","message":"NVRM: Xid 79","log_time":"%s","detected_time":"%s"}\n' \
    "$1" "$2" "$1" "$now" "$now"
}
produce() { kcat -P -b "$BS" -t events -K: 2>/dev/null || e2e_fail "kcat -P failed"; }
tainter() {  # NAME: a replica, started and given its partitions
  cat >"$T/$1.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-chaos-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig}
valve: {max_fraction: 1.0, per_rule_max_fraction: 1.0, max_new_taints: 0}
metrics_address: 127.0.0.1:0
YAML
  e2e_start "$1" "$TAINTER" --config "$T/$1.yaml"
  e2e_wait_log 30 "$1" '"msg":"partitions assigned"'
}
tainted() {
  e2e_api_get /debug/nodes |
    jq --arg k "$TAINT_KEY" '[.items[] | select([.spec.taints[]? | select(.key == $k)] | length > 0)] | length'
}
all_tainted() { [[ $(tainted) -eq $1 ]]; }

NODES=${NODES:-30}
args=()
for ((i = 0; i < NODES; i++)); do args+=(--node "gpu-$i"); done
e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
e2e_start_api "${args[@]}"

case "$SCENARIO" in
kill_rebalance)
  tainter a
  tainter b
  tainter c
  sleep 4  # the rebalances after b and c joined
  wave=$((NODES / 3))
  for ((i = 0; i < wave; i++)); do event_line "gpu-$i" "$RUN-$i"; done | produce
  # SIGKILL a replica right after its first taint, before it commits the rest.
  a_tainted() { e2e_log_has a '"msg":"tainted node"'; }
  e2e_wait 30 a_tainted || e2e_fail "replica a decided none of the first wave (its partitions: $(grep -c 'partitions assigned' "$T/a.log"))"
  t_kill=$SECONDS
  kill -9 "$E2E_PID_a"
  for ((i = wave; i < NODES; i++)); do event_line "gpu-$i" "$RUN-$i"; done | produce
  e2e_wait 90 all_tainted "$NODES" || e2e_fail "$(tainted) of $NODES nodes tainted after the kill"
  settle_s=$((SECONDS - t_kill))
  sleep 2  # anything applied twice would show now
  # Exactly one faultline taint and one reason (with its event id) per node.
  e2e_api_get /debug/nodes | jq -c --arg k "$TAINT_KEY" --arg a "$ANNOTATION" \
    '.items[] | {n: .metadata.name, t: ([.spec.taints[]? | select(.key == $k)] | length),
                 r: (.metadata.annotations[$a] // "[]" | fromjson | length)}' >"$T/per_node"
  bad=$(jq -c 'select(.t != 1 or .r != 1)' "$T/per_node")
  [[ -z "$bad" ]] || e2e_fail "nodes without exactly one taint and one reason: $bad"
  cat "$T"/{a,b,c}.log | grep '^{' | jq -r 'select(.msg == "tainted node") | .node' | sort | uniq -c |
    awk '$1 > 1' >"$T/twice"
  [[ ! -s "$T/twice" ]] || e2e_fail "tainted twice: $(cat "$T/twice")"
  taint_lines=$(cat "$T"/{a,b,c}.log | grep -c '"msg":"tainted node"')
  taint_writes=$(e2e_api_get /debug/requests | jq '[.[] | select(.method == "PATCH" and (.path | startswith("/api/v1/nodes/")))] | length')
  by_a=$(grep -c '"msg":"tainted node"' "$T/a.log" || true)
  echo "figure: replicas=3 killed=1 nodes=$NODES tainted=$(tainted) taint_decisions=$taint_lines (killed replica: $by_a) node_patches=$taint_writes applied_twice=0 all_tainted_s_after_kill=$settle_s"
  e2e_stop b || e2e_fail "replica b did not stop cleanly"
  e2e_stop c || e2e_fail "replica c did not stop cleanly"
  ;;
api_faults)
  OUTAGE_S=${OUTAGE_S:-10}
  half=$((OUTAGE_S / 2))
  tainter a
  pid=$E2E_PID_a
  fail() { curl -sf --max-time 5 --cacert "$T/ca.pem" -X "$1" -d '' "$API_URL/debug/fail$2" >/dev/null || e2e_fail "cannot inject $2"; }
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X DELETE "$API_URL/debug/requests" >/dev/null
  fail POST '?status=503&count=100000000'
  t0=$(date +%s%N)
  for ((i = 0; i < NODES; i++)); do event_line "gpu-$i" "$RUN-$i"; done | produce
  sleep "$half"
  fail DELETE ''
  fail POST '?status=429&retry_after=2&count=100000000'
  sleep $((OUTAGE_S - half))
  [[ $(tainted) -eq 0 ]] || e2e_fail "tainted during the outage?"
  fail DELETE ''
  t1=$(date +%s%N)
  during=$(e2e_api_get /debug/requests | jq '[.[] | select(.status == 503 or .status == 429)] | length')
  # A node queue backs off up to max_backoff (60 s) between calls of up to
  # call_deadline (30 s): the taints land within about 90 s of the end.
  e2e_wait 120 all_tainted "$NODES" || e2e_fail "$(tainted) of $NODES nodes tainted after the outage"
  recover_ms=$((($(date +%s%N) - t1) / 1000000))
  rate=$(awk -v n="$during" -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", n / (ns / 1e9) }')
  hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  echo "figure: outage_s=$OUTAGE_S (503 then 429 Retry-After 2) nodes=$NODES failed_requests=$during requests_per_s=$rate tainted_after_s=$((recover_ms / 1000)).$((recover_ms % 1000 / 100)) VmHWM_MiB=$((hwm_kb / 1024))"
  # No request storm: the client backs off (kubernetes.qps 5 would allow 5/s).
  awk -v r="$rate" 'BEGIN { exit !(r <= 10) }' || e2e_fail "$rate failed requests per second during the outage"
  ((hwm_kb < 200 * 1024)) || e2e_fail "VmHWM $((hwm_kb / 1024)) MiB"
  e2e_stop a || e2e_fail "the tainter did not stop cleanly"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
