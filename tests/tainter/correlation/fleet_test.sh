#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fleet correlation (issue 16) through real processes: a simulated 64-node
# training job. faultline-agent (node gpu-17's identity, with a GID from a
# fake sysfs, and its IB port going down) and kcat (the other nodes' events)
# -> fl-mockcluster -> faultline-tainter -> fl-fake-apiserver; then
# `faultline-tainter incidents`.
#
# usage: fleet_test.sh BUILD_DIR SCENARIO
#   hca_failure    gpu-17's HCA fails: 63 nodes report IB completion errors
#                  naming it (gpu-1, 5, 9, ... by the pod IP of its rank, which
#                  only the tainter's pod watch knows; the other odd ones by
#                  its Node InternalIP; even ones by the RoCE GID only its
#                  agent published), 3 lines each (each
#                  reporter's own threshold is 3); gpu-17's port goes down;
#                  every rank logs a watchdog timeout. Only gpu-17 is tainted,
#                  blamed by its peers; one incident of the ranks' owner
#                  PyTorchJob/train-llm, attributed to gpu-17.
#                  The rank on gpu-17 gets a FaultlineNodeTakenOut Event, the
#                  PyTorchJob a FaultlineIncident Event (issue 15 "tell the job").
#   storm          a 64-node NCCL watchdog storm with no hardware evidence: no
#                  taint, one incident, attributed to nobody; still one Event on
#                  PyTorchJob/train-llm saying so, and no pod told.
#   two_jobs       two jobs failing at once on disjoint nodes (gpu-0..31 with
#                  gpu-3's port down, gpu-32..63 with an Xid 79 that gpu-40's
#                  agent reads from a kernel-origin file): two
#                  incidents, attributed to gpu-3 and gpu-40; the Xid 79 takes
#                  gpu-40 out and its rank is told why (a DaemonSet's pod there
#                  is not),
#                  and each job's owner gets its incident's Event.
#   restart        hca_failure with the tainter stopped after half the reports
#                  and started again: the same outcome, one incident.
#
# API-double semantics relied on (as kube-apiserver): a Node's
# status.addresses (InternalIP) are served in list and watch as stored
# (POST /debug/nodes stores a Node as given); a JSON Patch `add
# /spec/taints` adds the taint and bumps resourceVersion; a Pod (POST
# /debug/pods stores it as given) is listed and watched with the field
# selector status.podIP!= (pods are selectable by status.podIP), and with
# spec.nodeName=<node>,status.phase!=... (selectable by node and phase); an
# Event is accepted only in its involvedObject's namespace ("default" for a
# Node; ValidateEvent, else 422), so a pod's or a job's Event is found in
# namespace ml.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/../../support/e2e_lib.sh"
e2e_require kcat jq curl
e2e_init "$1" faultline-fleet
SCENARIO=$2
RUN=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')$$
GID17="fe80:0000:0000:0000:0002:c903:0031:1017"

e2e_start_mock -b 1 -t events:6:1 -t events.dead-letter:1:1 -t identity:1:1
e2e_start_api
# 64 nodes, gpu-i at InternalIP 10.0.0.i (one jq; a POST each).
while read -r node; do
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST --data-binary "$node" "$API_URL/debug/nodes" >/dev/null ||
    e2e_fail "cannot add a node: $node"
done < <(jq -nc 'range(0; 64) as $i | ("gpu-" + ($i | tostring)) as $n |
  {apiVersion: "v1", kind: "Node",
   metadata: {name: $n, uid: ("uid-" + $n), labels: {"kubernetes.io/hostname": $n}},
   spec: {}, status: {addresses: [{type: "InternalIP", address: ("10.0.0." + ($i | tostring))},
                                  {type: "Hostname", address: $n}],
                      conditions: [{type: "Ready", status: "True"}]}}')
[[ $(e2e_api_get /debug/nodes | jq '.items | length') == 64 ]] || e2e_fail "the API double does not hold 64 nodes"

# add_pods JOB FROM TO: the job's ranks, ml/JOB-worker-i on gpu-i at pod IP
# 10.1.i.5, owned (controller) by PyTorchJob JOB.
add_pods() {
  while read -r pod; do
    curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST --data-binary "$pod" "$API_URL/debug/pods" >/dev/null ||
      e2e_fail "cannot add a pod: $pod"
  done < <(jq -nc --arg job "$1" --argjson from "$2" --argjson to "$3" 'range($from; $to + 1) as $i |
    {apiVersion: "v1", kind: "Pod",
     metadata: {name: ($job + "-worker-" + ($i | tostring)), namespace: "ml", uid: ("uid-" + $job + "-" + ($i | tostring)),
                ownerReferences: [{apiVersion: "kubeflow.org/v1", kind: "PyTorchJob", name: $job,
                                   uid: ("uid-" + $job), controller: true}]},
     spec: {nodeName: ("gpu-" + ($i | tostring))},
     status: {phase: "Running", podIP: ("10.1." + ($i | tostring) + ".5"),
              podIPs: [{ip: ("10.1." + ($i | tostring) + ".5")}]}}')
}
if [[ $SCENARIO == two_jobs ]]; then
  add_pods job-a 0 31
  add_pods job-b 32 63
  # Node infrastructure on gpu-40: a DaemonSet's pod is not told.
  curl -sf --max-time 5 --cacert "$T/ca.pem" -X POST "$API_URL/debug/pods" --data-binary \
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpu-feature-discovery-x40","namespace":"kube-system",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"gpu-feature-discovery","controller":true}]},
      "spec":{"nodeName":"gpu-40"},"status":{"phase":"Running","podIP":"10.0.0.40"}}' >/dev/null ||
    e2e_fail "cannot add the DaemonSet pod"
else
  add_pods train-llm 0 63
fi

# Lines of one job with gaps shorter than this are one incident. The restart
# scenario's storm spans a tainter restart (its gap is the restart's length).
INCIDENT_WINDOW=2s
[[ $SCENARIO == restart ]] && INCIDENT_WINDOW=15s
cat >"$T/tainter.yaml" <<YAML
kafka:
  brokers: "$BS"
  topic: events
  group: faultline-fleet-$RUN
  dead_letter_topic: events.dead-letter
  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", log_level: "0"}
kubernetes: {kubeconfig: $T/kubeconfig, qps: 200, burst: 400}  # 64 nodes of Events at once
valve: {event_interval: 1ms}
correlation: {identity_topic: identity, incident_window: $INCIDENT_WINDOW}
metrics_address: 127.0.0.1:0
YAML
tainter() {
  e2e_start tainter "$TAINTER" --config "$T/tainter.yaml"
  e2e_wait_log 30 tainter '"msg":"partitions assigned"'
}

# gpu-17's agent: its identity (the GID from a fake sysfs) and its port-down
# line (a file source of origin ibcounters, as the ibcounters source writes it).
start_agent17() {
  mkdir -p "$T/sys/class/infiniband/mlx5_3/ports/1/gids"
  echo "$GID17" >"$T/sys/class/infiniband/mlx5_3/ports/1/gids/0"
  echo "0000:0000:0000:0000:0000:0000:0000:0000" >"$T/sys/class/infiniband/mlx5_3/ports/1/gids/1"
  : >"$T/ib17.log"
  cat >"$T/agent.yaml" <<YAML
node_name: gpu-17
state_dir: $T/state
metrics_address: ""
shutdown_grace: 5s
checkpoint_interval: 200ms
sources:
  kmsg: {enabled: false}
  file: [{path: $T/ib17.log, follow: true, origin: ibcounters}]
kafka:
  brokers: "$BS"
  topic: events
  linger: 1ms
  properties: {log_level: "0"}
identity: {topic: identity, interval: 1h, sysfs_root: $T/sys}
YAML
  e2e_start agent "$AGENT" --config "$T/agent.yaml"
  e2e_wait_log 15 agent '"msg":"published node identity"'
  e2e_wait 15 identity_has gpu-17 || e2e_fail "gpu-17's identity did not reach the identity topic"
}
# gpu-40's agent, for a real Xid 79: a file source of origin kernel (as the
# kmsg source reads it), so the event is the nvidia.xid rule's own and passes
# the tainter's rule check.
start_agent40() {
  : >"$T/kmsg40.log"
  cat >"$T/agent40.yaml" <<YAML
node_name: gpu-40
state_dir: $T/state40
metrics_address: ""
shutdown_grace: 5s
checkpoint_interval: 200ms
sources:
  kmsg: {enabled: false}
  file: [{path: $T/kmsg40.log, follow: true, origin: kernel}]
kafka:
  brokers: "$BS"
  topic: events
  linger: 1ms
  properties: {log_level: "0"}
YAML
  e2e_start agent40 "$AGENT" --config "$T/agent40.yaml"
  e2e_wait_log 15 agent40 '"msg":"started"'
}
xid79_40() {
  echo "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus." >>"$T/kmsg40.log"
}
identity_has() { kcat -C -b "$BS" -t identity -e -q -f '%k\n' 2>/dev/null | grep -qx "$1"; }
port_down17() { echo "mlx5_3 port 1 state ACTIVE -> DOWN" >>"$T/ib17.log"; }

# produce FILE: one event per line, "key|json".
produce() { kcat -P -b "$BS" -t events -K '|' -l "$1" 2>/dev/null || e2e_fail "kcat -P failed"; }
JQ_DEFS='def watchdog($i; $n; $labels; $t; $run):
  {schema: 1, id: ($run + "-wd-" + $n), node: $n, source: "podlog", origin: "pod",
   rule: "nccl.watchdog-timeout", pack: "nccl", category: "application", severity: "warning",
   action: "event", summary: "NCCL collective ALLREDUCE (seq 88213) timed out",
   fields: {seq: "88213", op: "ALLREDUCE"},
   message: "[Rank \($i)] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600007 milliseconds before timing out.",
   log_time: $t, detected_time: $t, labels: $labels, suppressed: 0};'
# ib_reports FROM TO: the IB completion errors and watchdogs of reports().
ib_reports() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nr --argjson from "$1" --argjson to "$2" --arg t "$now" --arg run "$RUN" --arg gid "$GID17" "$JQ_DEFS"'
    range($from; $to + 1) as $i | select($i != 17) | ("gpu-" + ($i | tostring)) as $n |
    ({namespace: "ml", pod: ("train-llm-worker-" + ($i | tostring)), container: "trainer"}) as $labels |
    (if $i % 4 == 1 then "10.1.17.5" elif $i % 2 == 1 then "10.0.0.17" else $gid end) as $peer |
    ((range(0; 3) as $k |
      {schema: 1, id: ($run + "-ib-" + $n + "-" + ($k | tostring)), node: $n, source: "podlog", origin: "pod",
       rule: "nccl.ib-completion-error", pack: "nccl", category: "network", severity: "error", action: "taint",
       summary: ("NCCL IB completion error status 12 talking to " + $peer + " on local HCA mlx5_3"),
       fields: {peer: $peer, status: "12", hca: "mlx5_3"}, peer: $peer,
       message: ("NCCL WARN NET/IB : Got completion from peer " + $peer + "<33941> with status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_3"),
       log_time: $t, detected_time: $t, labels: $labels, suppressed: 0,
       threshold: {count: 3, window: "6h", key: ["hca"]}, expire: "24h"}),
     watchdog($i; $n; $labels; $t; $run))
    | $n + "|" + tojson' >"$T/batch.txt"
  produce "$T/batch.txt"
}
# watchdogs FROM TO JOB: every node FROM..TO logs a watchdog timeout in job JOB.
watchdogs() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nr --argjson from "$1" --argjson to "$2" --arg job "$3" --arg t "$now" --arg run "$RUN" "$JQ_DEFS"'
    range($from; $to + 1) as $i | ("gpu-" + ($i | tostring)) as $n |
    watchdog($i; $n; {namespace: "ml", pod: ($job + "-worker-" + ($i | tostring))}; $t; $run)
    | $n + "|" + tojson' >"$T/batch.txt"
  produce "$T/batch.txt"
}
# hardware NODE RULE ORIGIN SEVERITY LINE [SUMMARY]: one hardware event.
hardware() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
  jq -nc --arg n "$1" --arg r "$2" --arg o "$3" --arg s "$4" --arg m "$5" --arg sum "${6:-$2 on $1}" --arg t "$now" --arg run "$RUN" \
    '{schema: 1, id: ($run + "-hw-" + $n), node: $n, source: "kmsg", origin: $o, rule: $r, category: "hardware",
      severity: $s, action: "taint", summary: $sum, message: $m, log_time: $t, detected_time: $t}' |
    jq -r --arg n "$1" '$n + "|" + tojson' >"$T/hw.txt"
  produce "$T/hw.txt"
}

tainted_nodes() {
  e2e_api_get /debug/nodes |
    jq -r '.items[] | select([.spec.taints[]? | select(.key == "faultline.dev/faulty")] | length > 0) | .metadata.name' |
    sort | tr '\n' ' '
}
only_tainted() { [[ "$(tainted_nodes)" == "$1 " ]]; }
incident_lines() { grep -c '"msg":"incident"' "$T"/tainter*.log 2>/dev/null | awk -F: '{s += $NF} END {print s + 0}'; }
# An Event the API double recorded (POST .../events, kept as sent).
has_incident_event() {
  e2e_api_get /debug/events | jq -e --arg n "$1" \
    '[.items[]? | select(.involvedObject.name == $n and .reason == "FaultlineIncident")] | length == 1' >/dev/null
}
incidents_logged() { (($(incident_lines) >= $1)); }
# Events about pods and jobs (issue 15 "tell the job"), as the double recorded them.
events_about() {  # KIND NAME REASON: the Events' JSON, one a line
  e2e_api_get /debug/events | jq -c --arg k "$1" --arg n "$2" --arg r "$3" \
    '.items[]? | select(.involvedObject.kind == $k and .involvedObject.name == $n and .reason == $r)'
}
has_event_about() { [[ -n "$(events_about "$@")" ]]; }
pod_events() { e2e_api_get /debug/events | jq '[.items[]? | select(.reason == "FaultlineNodeTakenOut")] | length'; }
# check_pod_told POD NODE TEXT: the pod (namespace ml) has one Event, in its
# namespace, saying its node was taken out and why.
check_pod_told() {
  e2e_wait 20 has_event_about Pod "$1" FaultlineNodeTakenOut || e2e_fail "no FaultlineNodeTakenOut Event on pod $1"
  local ev
  ev=$(events_about Pod "$1" FaultlineNodeTakenOut)
  echo "pod Event: $ev"
  [[ $(wc -l <<<"$ev") == 1 ]] || e2e_fail "more than one Event on pod $1: $ev"
  jq -e --arg node "$2" --arg text "$3" '.metadata.namespace == "ml" and .involvedObject.namespace == "ml" and
    .type == "Warning" and (.message | startswith("node " + $node + " taken out of scheduling: ")) and
    (.message | contains($text))' <<<"$ev" >/dev/null || e2e_fail "pod $1's Event does not say why: $ev"
}
# check_job_told JOB TEXT: one FaultlineIncident Event on PyTorchJob JOB (ns ml).
check_job_told() {
  e2e_wait 20 has_event_about PyTorchJob "$1" FaultlineIncident || e2e_fail "no FaultlineIncident Event on PyTorchJob/$1"
  local ev
  ev=$(events_about PyTorchJob "$1" FaultlineIncident)
  echo "job Event: $ev"
  [[ $(wc -l <<<"$ev") == 1 ]] || e2e_fail "more than one incident Event on PyTorchJob/$1: $ev"
  jq -e --arg job "$1" --arg text "$2" '.metadata.namespace == "ml" and .involvedObject.apiVersion == "kubeflow.org/v1" and
    .involvedObject.uid == ("uid-" + $job) and (.message | contains($text))' <<<"$ev" >/dev/null ||
    e2e_fail "PyTorchJob/$1's Event is not the incident's: $ev"
}
incidents_cli() { "$TAINTER" incidents --config "$T/tainter.yaml" --kubeconfig "$T/kubeconfig" --since 1h 2>>"$T/cli.log"; }

check_blamed17() {
  e2e_wait 40 only_tainted gpu-17 || e2e_fail "tainted: '$(tainted_nodes)'; expected only gpu-17"
  local reasons
  reasons=$(e2e_node gpu-17 | jq -r '.metadata.annotations["faultline.dev/reasons"]')
  jq -e '[.[] | select(.rule == "nccl.ib-completion-error.by-peers")] | length == 1' <<<"$reasons" >/dev/null ||
    e2e_fail "gpu-17's reason is not the peers' accusation: $reasons"
  echo "gpu-17 reasons: $reasons"
  e2e_api_get /debug/events | jq -c '.items[]? | select(.involvedObject.name == "gpu-17") | {type, reason, message}' || true
  grep -q 'blamed by [0-9]* peers for nccl.ib-completion-error' <<<"$reasons" ||
    e2e_fail "the reason does not say how many peers blame gpu-17: $reasons"
  # Every reporter's own 3 lines would reach its threshold (3 per HCA): they
  # were set aside as the peer's fault, and nothing went to the valve.
  sleep 2
  only_tainted gpu-17 || e2e_fail "a reporter was tainted later: '$(tainted_nodes)'"
  e2e_log_has tainter '"msg":"safety valve refused a taint"' && e2e_fail "the valve had to refuse taints"
  return 0
}
check_one_incident() {  # ATTRIBUTED (or "none")
  e2e_wait 45 incidents_logged 1 || e2e_fail "no incident was logged"
  sleep 1
  [[ $(incident_lines) == 1 ]] || e2e_fail "$(incident_lines) incidents logged; expected one"
  local out
  out=$(incidents_cli) || e2e_fail "faultline-tainter incidents failed: $(cat "$T/cli.log")"
  echo "$out"
  [[ $(grep -c '^20.*  ml/train-llm  64 nodes' <<<"$out") == 1 ]] || e2e_fail "expected one 64-node incident of ml/train-llm"
  if [[ $SCENARIO != two_jobs ]]; then
    # The job is the ranks' owner, from the pod watch (daemon) and the pod list (CLI).
    grep -q '^    owner: PyTorchJob/train-llm$' <<<"$out" || e2e_fail "the incident does not name its owner"
    grep -h '"msg":"incident"' "$T"/tainter*.log | grep -q '"owner":"PyTorchJob/train-llm"' ||
      e2e_fail "the logged incident does not name its owner"
  fi
  if [[ $1 == none ]]; then
    grep -q 'attributed: none' <<<"$out" || e2e_fail "the incident was attributed"
  else
    grep -q "attributed: $1\$" <<<"$out" || e2e_fail "the incident is not attributed to $1"
    has_incident_event "$1" || e2e_fail "no FaultlineIncident Event on $1"
  fi
}

case "$SCENARIO" in
hca_failure)
  start_agent17
  tainter
  port_down17
  ib_reports 0 63
  watchdogs 17 17 train-llm
  check_blamed17
  check_one_incident gpu-17
  # Telling the job: the rank on gpu-17 learns why its node went away (the
  # other ranks' nodes were not taken out), and the job's owner gets the incident.
  check_pod_told train-llm-worker-17 gpu-17 "; this pod of PyTorchJob/train-llm ran there"
  [[ $(pod_events) == 1 ]] || e2e_fail "$(pod_events) pod Events; expected only train-llm-worker-17's"
  check_job_told train-llm "attributed to node gpu-17"
  ;;
restart)
  start_agent17
  tainter
  port_down17
  ib_reports 0 30
  e2e_wait 30 only_tainted gpu-17 || e2e_fail "gpu-17 was not tainted before the restart"
  e2e_stop tainter || e2e_fail "tainter exited with $?"
  mv "$T/tainter.log" "$T/tainter-1.log"
  ib_reports 31 63
  watchdogs 17 17 train-llm
  tainter
  check_blamed17
  check_one_incident gpu-17
  ;;
storm)
  tainter
  watchdogs 0 63 train-llm
  check_one_incident none
  [[ -z "$(tainted_nodes)" ]] || e2e_fail "a watchdog storm tainted: $(tainted_nodes)"
  # No hardware evidence: still one Event on the job's owner, saying so; no
  # node was taken out, so no pod is told.
  check_job_told train-llm "NCCL watchdog storm on 64 nodes"
  check_job_told train-llm "no hardware evidence"
  [[ $(pod_events) == 0 ]] || e2e_fail "pods were told of a node taken out, but none was"
  ;;
two_jobs)
  tainter
  hardware gpu-3 ib.port-down ibcounters warning "mlx5_0 port 1 state ACTIVE -> DOWN"
  start_agent40
  xid79_40
  # The Xid is evidence only if it came before the incident (the lookback):
  # wait until it has taken gpu-40 out before the jobs' ranks time out.
  gpu40_tainted() { [[ " $(tainted_nodes)" == *" gpu-40 "* ]]; }
  e2e_wait 30 gpu40_tainted || e2e_fail "gpu-40's Xid 79 did not taint it"
  watchdogs 0 31 job-a
  watchdogs 32 63 job-b
  e2e_wait 30 incidents_logged 2 || e2e_fail "fewer than two incidents were logged"
  out=$(incidents_cli) || e2e_fail "faultline-tainter incidents failed: $(cat "$T/cli.log")"
  echo "$out"
  grep -q '  ml/job-a  32 nodes .*attributed: gpu-3$' <<<"$out" || e2e_fail "job-a's incident is not attributed to gpu-3"
  grep -q '  ml/job-b  32 nodes .*attributed: gpu-40$' <<<"$out" || e2e_fail "job-b's incident is not attributed to gpu-40"
  [[ $(grep -c '^20' <<<"$out") == 2 ]] || e2e_fail "expected exactly two incidents"
  has_incident_event gpu-3 || e2e_fail "no FaultlineIncident Event on gpu-3"
  has_incident_event gpu-40 || e2e_fail "no FaultlineIncident Event on gpu-40"
  # The Xid 79 (from gpu-40's agent) took gpu-40 out: its rank is told, not
  # the DaemonSet's pod there. gpu-3's forged port-down is evidence for the
  # incident but set aside by the rule check (no taint): its rank is not
  # told. Each job's owner gets its own incident.
  check_pod_told job-b-worker-40 gpu-40 "Xid 79"
  check_pod_told job-b-worker-40 gpu-40 "(rule nvidia.xid); this pod of PyTorchJob/job-b ran there"
  has_event_about Pod gpu-feature-discovery-x40 FaultlineNodeTakenOut && e2e_fail "a DaemonSet's pod was told"
  [[ $(pod_events) == 1 ]] || e2e_fail "$(pod_events) pod Events; expected only job-b-worker-40's"
  check_job_told job-a "attributed to node gpu-3"
  check_job_told job-b "attributed to node gpu-40"
  ;;
*)
  e2e_fail "unknown scenario $SCENARIO"
  ;;
esac
e2e_stop tainter || e2e_fail "tainter exited with $?"
echo "PASS: $SCENARIO"
