#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Storm: a fleet of NODES (200; the documented command uses 10000) in the
# API double, of which FAULTY_PCT (40) % report a taint-worthy fault within
# SPREAD_S (5; the documented command 60) seconds, as a bad rule or a spine
# switch failure would make them. One faultline-tainter, its valve by VALVE:
#   share    (the default here) valve.max_fraction 0.1 and no max_new_taints
#            limit, so the share, not the rate, is what holds: NODES / 10
#            taints, the stress figure for the taints' own cost;
#   default  no valve settings: the tainter's defaults (max_fraction and
#            per_rule_max_fraction 0.1, max_new_taints 5 per 10m,
#            refusal_events_per_minute 10), so min(5, NODES / 10) taints and
#            the rest refused.
# kubernetes.qps QPS (50) / burst 2 x QPS; QPS=default leaves them out (the
# tainter's defaults, qps 5 / burst 10). Each node runs PODS_PER_NODE (1)
# pods of a Job, which are told when their node is taken out.
#
# Checked: the tainted count never exceeds the valve's limit and reaches it;
# every fault is decided (a "tainted node" or "safety valve refused a taint"
# log line for each faulty node); every refusal is recorded (counted in
# faultline_tainter_taints_refused_total, each refused node logged, the
# FaultlineValveShut Events within refusal_events_per_minute and the rest
# counted in faultline_tainter_refusal_events_suppressed_total);
# `faultline-tainter nodes` answers during the storm; `untaint` of one node
# works, and the freed place goes to a waiting refused fault (share: the
# count stays at the limit) or stays free (default: max_new_taints' window
# still holds its 5); the API write rate stays within qps + burst per second;
# every pod of a tainted node got its FaultlineNodeTakenOut Event; the API
# requests per new taint, counted from the API double's own log (the storm's
# requests but node lists, watches, refusal Events and pod Events, divided by
# the taints), stay within MAX_REQUESTS_PER_TAINT (4: the node patched from
# the watch's picture (read only after a refused patch), its conditions, its
# Event; the valve Lease write (read only after a conflict), shared by up to
# 10 new taints of one Kafka poll; plus the pod listing, shared once more
# than pod_events.node_lists_per_minute nodes are taken out in a minute:
# 0.35 per taint at 200 nodes; 3.6 in all there, 3.17 at 10,000).
# Figure line: the valve, peak tainted, writes/s (peak 1 s and mean),
# decision latency (event produced -> "tainted node"/"refused" log line,
# p50/p99/max), the `nodes` command's wall time (slowest of the storm),
# requests per taint, refusals recorded, the tainter's peak RSS (VmHWM).
#
# API-double semantics relied on (as kube-apiserver): GET /api/v1/nodes lists
# every node with a resourceVersion and a watch from it streams each later
# change; node PATCHes and Event POSTs are recorded with their time
# (/debug/requests, not itself recorded), so writes per second are the
# server's own count.
#
# usage: storm.sh BUILD_DIR
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-storm
NODES=${NODES:-200}
FAULTY_PCT=${FAULTY_PCT:-40}
SPREAD_S=${SPREAD_S:-5}
QPS=${QPS:-50}
PODS_PER_NODE=${PODS_PER_NODE:-1}
TIMEOUT_S=${TIMEOUT_S:-600}  # every fault decided within this, or the test fails
# The checks below read every node: every 0.5 s, or 2 s for a big fleet.
POLL_S=$( ((NODES > 1000)) && echo 2 || echo 0.5)
if [[ $QPS == default ]]; then
  limits=""
  QPS=5 BURST=10
else
  BURST=$((2 * QPS))
  limits=", qps: $QPS, burst: $BURST"
fi
VALVE=${VALVE:-share}
FRACTION_LIMIT=$((NODES / 10 > 1 ? NODES / 10 : 1))  # max_fraction 0.1, min_allowed 1
case $VALVE in
  share)
    valve_yaml="valve: {max_fraction: 0.1, per_rule_max_fraction: 0.1, max_new_taints: 0, min_allowed: 1}"
    LIMIT=$FRACTION_LIMIT
    ;;
  default)  # the tainter's own defaults (tainter/core/valve.h, tainter/README.md)
    valve_yaml=""
    LIMIT=$((FRACTION_LIMIT < 5 ? FRACTION_LIMIT : 5))  # max_new_taints 5 per 10m
    # 5 taints carry the fixed costs alone: the Lease's creation (GET 404 and
    # POST, 0.4 a taint) and a pod list each (1: 5 in a minute is within
    # pod_events.node_lists_per_minute, so nothing is shared).
    MAX_REQUESTS_PER_TAINT=${MAX_REQUESTS_PER_TAINT:-5.5}
    ;;
  *) e2e_fail "VALVE=$VALVE: share or default" ;;
esac
MAX_REQUESTS_PER_TAINT=${MAX_REQUESTS_PER_TAINT:-4}
METRICS_PORT=$(e2e_free_port)
FAULTY=$((NODES * FAULTY_PCT / 100))
TAINT_KEY=faultline.dev/faulty

args=()
for ((i = 0; i < NODES; i++)); do args+=(--node "gpu-$i"); done
e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1
e2e_start_api "${args[@]}" --pods-per-node "$PODS_PER_NODE"

cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-storm-$$
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig$limits}
rules: {builtin: true, paths: [$HERE/storm_rules.yaml]}
$valve_yaml
metrics_address: 127.0.0.1:$METRICS_PORT
YAML
e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
e2e_wait_log 60 tainter '"msg":"partitions assigned"'

tainted() {
  e2e_api_get /debug/nodes |
    jq --arg k "$TAINT_KEY" '[.items[] | select([.spec.taints[]? | select(.key == $k)] | length > 0)] | length'
}
# Faulty nodes with a decision in the log (a refused node may be logged again
# when its parked fault is decided again).
decided() {
  grep '"msg":"tainted node"\|"msg":"safety valve refused a taint"' "$T/tainter.log" |
    grep -o '"node":"[^"]*"' | sort -u | wc -l
}
metric() {
  curl -sf --max-time 5 "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk -v m="$1" 'index($1, m) == 1 && (length($1) == length(m) || substr($1, length(m) + 1, 1) == "{") { s += $2 } END { printf "%d\n", s }'
}

# `faultline-tainter nodes` (its own client, the default rate limit) during
# the storm: its slowest answer is the figure.
nodes_ms=0
nodes_cmd() {
  local t0 ms
  t0=$(date +%s%N)
  "$TAINTER" nodes --kubeconfig "$T/kubeconfig" >"$T/nodes.out" 2>&1 || e2e_fail "nodes failed during the storm"
  ms=$((($(date +%s%N) - t0) / 1000000))
  ((ms > nodes_ms)) && nodes_ms=$ms
  return 0
}

# The storm: FAULTY nodes (spread over the fleet), in 10 batches over SPREAD_S.
batch=$(((FAULTY + 9) / 10))
: >"$T/produced"
t_storm=$(date +%s.%N)
for ((b = 0; b < 10; b++)); do
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  stamp=$(date +%s.%N)
  for ((j = b * batch; j < (b + 1) * batch && j < FAULTY; j++)); do
    node="gpu-$((j * NODES / FAULTY))"
    printf '%s %s\n' "$node" "$stamp" >>"$T/produced"
    printf '%s:{"schema":1,"id":"storm-%s","node":"%s","source":"kmsg","origin":"kernel","rule":"storm.link_down","category":"network","severity":"critical","action":"taint","summary":"link down","message":"mlx5: link down","log_time":"%s","detected_time":"%s"}\n' \
      "$node" "$j" "$node" "$now" "$now"
  done | kcat -P -b "$BS" -t events -K: 2>/dev/null || e2e_fail "kcat -P failed"
  t_batch=$(date +%s.%N)
  nodes_cmd
  sleep "$(awk -v s="$SPREAD_S" -v a="$t_batch" -v b="$(date +%s.%N)" \
    'BEGIN { w = s / 10 - (b - a); printf "%.3f", (w > 0 ? w : 0) }')"
done

# During the storm: the tainter answers `nodes`, and the share never exceeds the limit.
peak=0
while (($(decided) < FAULTY)); do
  n=$(tainted)
  ((n > peak)) && peak=$n
  ((n <= LIMIT)) || e2e_fail "$n nodes tainted; the valve ($VALVE) allows $LIMIT"
  nodes_cmd
  (($(date +%s) - ${t_storm%.*} < TIMEOUT_S)) ||
    e2e_fail "only $(decided) of $FAULTY faults decided in $TIMEOUT_S s"
  sleep "$POLL_S"
done
t_done=$(date +%s.%N)
n=$(tainted)
((n > peak)) && peak=$n
[[ $n -eq $LIMIT ]] || e2e_fail "$n nodes tainted after the storm, the limit is $LIMIT"

# Every refusal recorded: each refused node logged (above, decided()), the
# refusals counted, and FaultlineValveShut Events within the fleet-wide
# budget (10 a minute, a burst of 10), the rest counted as suppressed.
refused_nodes=$(grep '"msg":"safety valve refused a taint"' "$T/tainter.log" | grep -o '"node":"[^"]*"' | sort -u | wc -l)
((refused_nodes == FAULTY - LIMIT)) || e2e_fail "$refused_nodes refused nodes logged, $((FAULTY - LIMIT)) refused"
refused_total=$(metric faultline_tainter_taints_refused_total)
((refused_total >= FAULTY - LIMIT)) || e2e_fail "taints_refused_total $refused_total < $((FAULTY - LIMIT))"
suppressed=$(metric faultline_tainter_refusal_events_suppressed_total)
shut_events=$(e2e_api_get /debug/events | jq '[.items[] | select(.reason == "FaultlineValveShut")] | length')
storm_min=$(awk -v a="$t_storm" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", (b - a) / 60 + 1 }')
((shut_events >= 1 && shut_events <= 10 + 10 * storm_min)) ||
  e2e_fail "$shut_events FaultlineValveShut Events in $storm_min min (budget 10 a minute, burst 10)"
((shut_events + suppressed >= refused_nodes)) ||
  e2e_fail "$shut_events refusal Events + $suppressed suppressed < $refused_nodes refused nodes"

# Every pod of a tainted node is told (some from the shared listing, within
# pod_events' batch delay of 10 s).
told() {
  e2e_api_get /debug/events |
    jq '[.items[] | select(.reason == "FaultlineNodeTakenOut") | .involvedObject.name] | unique | length'
}
pods_told() { [[ $(told) -ge $((LIMIT * PODS_PER_NODE)) ]]; }
e2e_wait 60 pods_told || e2e_fail "$(told) pods told, $((LIMIT * PODS_PER_NODE)) ran on the tainted nodes"
t_told=$(date +%s.%N)
# shellcheck disable=SC2154  # E2E_PID_tainter: set by e2e_start
rss_kb=$(awk '/^VmHWM/ { print $2 }' "/proc/$E2E_PID_tainter/status")

# API requests per new taint, from the API double's own log (the storm only:
# before the untaint below). Left out: node lists and watches (the informer
# and the `nodes` command), the refusals' FaultlineValveShut Events, the
# pods' own Events (one per pod, reported apart).
e2e_api_get /debug/requests >"$T/requests.json"
read -r per_taint pod_events pod_lists < <(jq -r --argjson from "${t_storm%.*}" --argjson to "${t_told%.*}" \
  --argjson taints "$LIMIT" '
  [.[] | select(.time_unix_us >= $from * 1000000 and .time_unix_us <= ($to + 1) * 1000000)
       | select(.params.watch != "true" and .path != "/api/v1/nodes")
       | select((.body | fromjson? // {} | if type == "object" then .reason else null end)
                != "FaultlineValveShut")] as $r
  | ($r | map(select(.path == "/api/v1/namespaces/ml/events")) | length) as $pod_events
  | [(($r | length) - $pod_events) / $taints, $pod_events,
     ($r | map(select(.path == "/api/v1/pods")) | length)] | @tsv' "$T/requests.json")
# Which requests, by method and path with the node's name as NODE.
breakdown=$(jq -r --argjson from "${t_storm%.*}" --argjson to "${t_told%.*}" '
  [.[] | select(.time_unix_us >= $from * 1000000 and .time_unix_us <= ($to + 1) * 1000000)
       | select(.params.watch != "true")
       | .method + " " + (.path | sub("/nodes/[^/]+"; "/nodes/NODE") | sub("/leases/.*"; "/leases/L"))
         + (if .path == "/api/v1/pods" then (if (.params.fieldSelector // "" | startswith("spec.nodeName"))
            then "?node" else "?all" end) else "" end)
         + ((.body | fromjson? // {} | if type == "object" and .reason then " " + .reason else "" end))]
  | group_by(.) | map("\(length) \(.[0])") | join(", ")' "$T/requests.json")
echo "requests in the storm: $breakdown"
# The taint's own requests (the pod listing is for the pods' Events).
per_taint_own=$(awk -v a="$per_taint" -v l="$pod_lists" -v t="$LIMIT" 'BEGIN { printf "%.3f", a - l / t }')
awk -v a="$per_taint" -v b="$MAX_REQUESTS_PER_TAINT" 'BEGIN { exit !(a <= b) }' ||
  e2e_fail "$per_taint API requests per new taint (bound $MAX_REQUESTS_PER_TAINT)"

# Lifting works in the storm: untaint one node; a waiting refused fault takes
# its place (share), or max_new_taints' window keeps it free (default).
victim=$(e2e_api_get /debug/nodes | jq -r --arg k "$TAINT_KEY" \
  '[.items[] | select([.spec.taints[]? | select(.key == $k)] | length > 0)][0].metadata.name')
"$TAINTER" untaint "$victim" --reason "storm test" --config "$T/tainter.yaml" \
  --kubeconfig "$T/kubeconfig" >>"$T/cli.log" 2>&1 || e2e_fail "untaint $victim failed"
refill() { [[ $(tainted) -eq $LIMIT ]] && [[ $(grep -c '"msg":"tainted node"' "$T/tainter.log") -gt $LIMIT ]]; }
if [[ $VALVE == share ]]; then
  e2e_wait 60 refill || e2e_fail "after untaint: $(tainted) tainted, no waiting fault took the free place"
  refilled=yes
else
  # The parked faults are decided again each second (Tick): 5 s is 5 chances.
  sleep 5
  ! refill || e2e_fail "after untaint: a sixth new taint within max_new_taints' window"
  [[ $(tainted) -eq $((LIMIT - 1)) ]] || e2e_fail "after untaint: $(tainted) tainted, expected $((LIMIT - 1))"
  refilled=no_max_new_taints_holds
fi
e2e_node "$victim" | jq -e --arg k "$TAINT_KEY" '[.spec.taints[]? | select(.key == $k)] | length == 0' >/dev/null ||
  e2e_fail "$victim was tainted again after untaint"

# Writes per second, as the API double recorded them (the storm only).
e2e_api_get /debug/requests >"$T/requests.json"
jq -r '.[] | select(.method != "GET") | (.time_unix_us / 1000000 | floor)' "$T/requests.json" |
  sort -n | uniq -c | awk '{print $1}' | sort -n >"$T/writes_per_s"
writes=$(jq '[.[] | select(.method != "GET")] | length' "$T/requests.json")
peak_wps=$(tail -n1 "$T/writes_per_s")
storm_s=$(awk -v a="$t_storm" -v b="$t_done" 'BEGIN { printf "%.1f", b - a }')
((peak_wps <= QPS + BURST)) || e2e_fail "$peak_wps writes in one second; qps $QPS, burst $BURST"

# Decision latency: produced -> the tainter's decision log line for that node.
jq -r 'select(.msg == "tainted node" or .msg == "safety valve refused a taint") | .node + " " + .ts' \
  <(grep '^{' "$T/tainter.log") | awk '!seen[$1]++' >"$T/decisions"
lat=$(
  while read -r node ts; do
    printf '%s %s\n' "$node" "$(date -d "$ts" +%s.%N)"
  done <"$T/decisions" | awk 'NR == FNR { p[$1] = $2; next } ($1 in p) { printf "%.3f\n", $2 - p[$1] }' \
    "$T/produced" - | sort -n
)
count=$(wc -l <<<"$lat")
p50=$(sed -n "$(((count + 1) / 2))p" <<<"$lat")
p99=$(sed -n "$(((count * 99 + 99) / 100))p" <<<"$lat")
max=$(tail -n1 <<<"$lat")
echo "figure: valve=$VALVE nodes=$NODES faulty=$FAULTY within_s=$SPREAD_S limit=$LIMIT peak_tainted=$peak ($(awk -v p="$peak" -v n="$NODES" 'BEGIN { printf "%.1f", 100 * p / n }')%, limit $LIMIT) decided_in_s=$storm_s writes=$writes peak_writes_per_s=$peak_wps (qps $QPS burst $BURST) decision_latency_s p50=$p50 p99=$p99 max=$max nodes_cmd_max_ms=$nodes_ms requests_per_taint=$per_taint requests_per_taint_without_pod_lists=$per_taint_own pod_lists=$pod_lists pod_events=$pod_events refused_nodes=$refused_nodes taints_refused_total=$refused_total valve_shut_events=$shut_events refusal_events_suppressed=$suppressed tainter_rss_max_mib=$((rss_kb / 1024)) untaint_refilled=$refilled"
echo "PASS: storm"
