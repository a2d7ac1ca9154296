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
#   leader_moves: 3 brokers; every partition's leader moves to the next
#           broker MOVES (5) times, 0.5 s apart, while NODES taint events
#           arrive in as many waves: every node tainted, none twice, none
#           dead-lettered.
#   api_connections: the API server reads every request and never answers
#           (hung: kubernetes.request_timeout, 10 s, ends each attempt) for
#           OUTAGE_S/2 s, then resets every connection before answering for
#           OUTAGE_S/2 s (OUTAGE_S 10; the documented command 60): nothing is
#           tainted during it, every node is after it, the request rate stays
#           bounded, the tainter's open fds do not grow, VmHWM reported.
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
  printf '%s:{"schema":1,"id":"%s","node":"%s","source":"kmsg","origin":"kernel","rule":"chaos.xid","category":"hardware","severity":"critical","action":"taint","summary":"Xid 79","message":"NVRM: Xid 79","log_time":"%s","detected_time":"%s"}\n' \
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
rules: {builtin: true, paths: [$HERE/tainter_chaos_rules.yaml]}
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
if [[ $SCENARIO == leader_moves ]]; then
  e2e_start_mock -b 3 -t events:6:3 -t events.dead-letter:1:3
else
  e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
fi
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
leader_moves)
  MOVES=${MOVES:-5}
  tainter a
  wave=$(((NODES + MOVES - 1) / MOVES))
  t0=$SECONDS
  for ((m = 0; m < MOVES; m++)); do
    for ((i = m * wave; i < (m + 1) * wave && i < NODES; i++)); do event_line "gpu-$i" "$RUN-$i"; done | produce
    for p in 0 1 2 3 4 5; do e2e_mock "leader events $p $(((m + p) % 3 + 1))"; done
    sleep 0.5
  done
  e2e_wait 60 all_tainted "$NODES" || e2e_fail "$(tainted) of $NODES nodes tainted with $MOVES leader moves"
  settle_s=$((SECONDS - t0))
  sleep 1
  grep '^{' "$T/a.log" | jq -r 'select(.msg == "tainted node") | .node' | sort | uniq -c | awk '$1 > 1' >"$T/twice"
  [[ ! -s "$T/twice" ]] || e2e_fail "tainted twice: $(cat "$T/twice")"
  dead=$(kcat -C -b "$BS" -t events.dead-letter -e -q 2>/dev/null | wc -l)
  ((dead == 0)) || e2e_fail "$dead events dead-lettered"
  moved=$(grep -c '^OK leader Success' "$T/mock.log" || true)
  ((moved == MOVES * 6)) || e2e_fail "the mock acknowledged $moved of $((MOVES * 6)) leader moves"
  echo "figure: leader_moves=$MOVES (x6 partitions, $moved acknowledged) nodes=$NODES tainted=$(tainted) applied_twice=0 dead_lettered=0 all_tainted_s=$settle_s"
  e2e_stop a || e2e_fail "the tainter did not stop cleanly"
  ;;
api_connections)
  OUTAGE_S=${OUTAGE_S:-10}
  half=$((OUTAGE_S / 2))
  tainter a
  pid=$E2E_PID_a
  fail() { curl -sf --max-time 5 --cacert "$T/ca.pem" -X "$1" -d '' "$API_URL/debug/fail$2" >/dev/null || e2e_fail "cannot inject $2"; }
  fds() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
  fds_before=$(fds)
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X DELETE "$API_URL/debug/requests" >/dev/null
  fail POST '?status=hang&count=100000000'
  t0=$(date +%s%N)
  for ((i = 0; i < NODES; i++)); do event_line "gpu-$i" "$RUN-$i"; done | produce
  sleep "$half"
  # The resets queue behind the hang, then the hang alone is lifted: no gap.
  fail POST '?status=reset&count=100000000'
  fail DELETE '?status=hang'
  sleep $((OUTAGE_S - half))
  [[ $(tainted) -eq 0 ]] || e2e_fail "tainted during the outage?"
  fail DELETE ''
  t1=$(date +%s%N)
  e2e_api_get /debug/requests >"$T/requests.json"
  hung=$(jq '[.[] | select(.status == -1)] | length' "$T/requests.json")
  reset=$(jq '[.[] | select(.status == -3)] | length' "$T/requests.json")
  e2e_wait 120 all_tainted "$NODES" || e2e_fail "$(tainted) of $NODES nodes tainted after the outage"
  recover_ms=$((($(date +%s%N) - t1) / 1000000))
  rate=$(awk -v n="$((hung + reset))" -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", n / (ns / 1e9) }')
  hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
  fds_after=$(fds)
  echo "figure: outage_s=$OUTAGE_S (hung then reset) nodes=$NODES hung_requests=$hung reset_requests=$reset requests_per_s=$rate tainted_after_s=$((recover_ms / 1000)).$((recover_ms % 1000 / 100)) fds_before=$fds_before fds_after=$fds_after VmHWM_MiB=$((hwm_kb / 1024))"
  awk -v r="$rate" 'BEGIN { exit !(r <= 10) }' || e2e_fail "$rate failed requests per second during the outage"
  ((fds_after <= fds_before + 4)) || e2e_fail "file descriptors: $fds_before before, $fds_after after"
  ((hwm_kb < 200 * 1024)) || e2e_fail "VmHWM $((hwm_kb / 1024)) MiB"
  e2e_stop a || e2e_fail "the tainter did not stop cleanly"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
echo "PASS: $SCENARIO"
